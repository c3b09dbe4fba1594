// Search sessions in the database every node shares (spec 4.5.3): a page of a session opened on one
// node continues on any other. The same rules as the memory store (domain/search_session.hpp), in
// SQL: ownership and idle expiry are checked by each statement, the hits a session answered are an
// array in its row (a hit taken by a concurrent page, on any node, is taken once: the row is locked
// while a page adds its hits), and the bounds (sessions in all, per owner, held hits) are applied by
// a sweep that one node at a time runs every few seconds (an advisory lock held by the sweep's
// statement), on a sweeper actor of each node, never on a page's path.
//
// What a search costs here: a first page none on its path. Its session (with the hits it answered)
// is written after its answer, by the store's writer thread, which writes every session opened
// meanwhile in one statement: under load a statement writes several, so a search costs a fraction
// of a statement and no wait. A further page costs two (find, answered), each on one row found by
// its key. A further page that finds no session waits for it while it may still be on its way:
// opened on this node and not written yet (until the writer has written it), or on another node
// within the last `open_window_ms` (its id tells when; polled). The key is the
// table's only index, so a page's update stays on the row's heap page (a HOT update, room kept by
// the fill factor) and leaves no index entry behind. A page's cost grows with the hits its session
// answered before (the array is read, compared and written again), bounded by
// `search.max_session_hits`; the sweep's with the sessions held, bounded by the bounds it applies,
// and with the dead rows of the sessions removed since the table's last vacuum, which the sweeper
// runs once its sweeps removed as many as are held (sessions_vacuum).

#include "storage/postgresql/search_sessions.hpp"

#include "domain/ids.hpp"
#include "storage/postgresql/backend.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace cl::storage {

namespace {

using pg::num;
using pg::statement;

/// The sessions' tables, as a schema part of their own. Ids are `srch_` plus random characters: the
/// primary key alone finds a session; ownership is checked beside it.
const bool schema = pg::schema_part("search", {
  // 1: sessions and the hits each answered.
  R"sql(
CREATE TABLE search_sessions (
  id text COLLATE "C" PRIMARY KEY, tenant text COLLATE "C" NOT NULL, sub text COLLATE "C" NOT NULL,
  client_id text COLLATE "C" NOT NULL, query text NOT NULL, types text[] NOT NULL, languages text[] NOT NULL,
  work_id text NOT NULL, usable_only boolean NOT NULL, position bigint NOT NULL, last_used_ms bigint NOT NULL,
  answered integer NOT NULL DEFAULT 0);
CREATE INDEX search_sessions_by_owner ON search_sessions (tenant, sub, client_id, last_used_ms);
CREATE INDEX search_sessions_by_use ON search_sessions (last_used_ms);
CREATE TABLE search_session_hits (
  session text COLLATE "C" NOT NULL REFERENCES search_sessions (id) ON DELETE CASCADE,
  resource text COLLATE "C" NOT NULL,
  PRIMARY KEY (session, resource));
)sql",
  // 2: the hits a session answered as an array in its row (one row written per page, not a row per
  // hit and a cascade per eviction); no index but the key (a page's update is then a HOT one; the
  // sweep reads every session, and applies the owner's bound too).
  R"sql(
ALTER TABLE search_sessions ADD COLUMN hits text[] NOT NULL DEFAULT '{}';
UPDATE search_sessions s SET hits = h.ids
  FROM (SELECT session, array_agg(resource ORDER BY resource) AS ids FROM search_session_hits GROUP BY session) h
  WHERE h.session = s.id;
DROP TABLE search_session_hits;
DROP INDEX search_sessions_by_use;
DROP INDEX search_sessions_by_owner;
ALTER TABLE search_sessions SET (fillfactor = 50);
)sql",
});

/// Opens sessions with the hits each first page answered (the bounds are the sweep's): row i is
/// element i of every array; `types`, `languages` and `hits` are array literals of their own. The
/// commit does not wait for the WAL to reach the disk (`synchronous_commit` off for this
/// statement's transaction alone): the sessions are visible to every node at once, and a database
/// crash within the WAL writer's delay can lose them, so their next page is 404
/// SEARCH_SESSION_NOT_FOUND (the search is started again), never a hit answered twice. Every later
/// write of a session (`answered`) waits, and flushes an open before it.
const statement sessions_open{
  "WITH quick AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true)) "
  "INSERT INTO search_sessions (id, tenant, sub, client_id, query, types, languages, work_id, usable_only, position, "
  "last_used_ms, hits, answered) SELECT u.id, u.tenant, u.sub, u.client_id, u.query, u.types::text[], "
  "u.languages::text[], u.work_id, u.usable_only, u.position, u.last_used_ms, u.hits::text[], "
  "cardinality(u.hits::text[]) FROM quick, unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], "
  "$6::text[], $7::text[], $8::text[], $9::boolean[], $10::bigint[], $11::bigint[], $12::text[]) "
  "AS u(id, tenant, sub, client_id, query, types, languages, work_id, usable_only, position, last_used_ms, hits) "
  "ON CONFLICT (id) DO NOTHING"};

/// The owner's session and the hits it answered, touched when it has not expired ($6: the oldest
/// use that has not).
const statement session_find{
  "WITH s AS (SELECT id, query, types, languages, work_id, usable_only, position, last_used_ms, hits "
  "FROM search_sessions WHERE id = $1 AND tenant = $2 AND sub = $3 AND client_id = $4), "
  "touched AS (UPDATE search_sessions t SET last_used_ms = greatest(t.last_used_ms, $5) FROM s "
  "WHERE t.id = s.id AND s.last_used_ms > $6) "
  "SELECT query, types, languages, work_id, usable_only, position, last_used_ms, hits FROM s"};

/// Adds hits ($5, each once) to the owner's live session; answers whether it is there and the hits
/// new to it, in the order asked. The row is locked first (and read again when a concurrent page
/// changed it meanwhile): concurrent pages of one session add one after the other, on any node.
const statement session_answered{
  "WITH s AS (SELECT id, hits FROM search_sessions WHERE id = $1 AND tenant = $2 AND sub = $3 AND client_id = $4 "
  "AND last_used_ms > $6 FOR UPDATE), "
  "fresh AS (SELECT coalesce(array_agg(u.h ORDER BY u.n), '{}') AS f FROM s, unnest($5::text[]) WITH ORDINALITY "
  "AS u(h, n) WHERE u.h <> ALL (s.hits)), "
  "touched AS (UPDATE search_sessions t SET last_used_ms = greatest(t.last_used_ms, $7), hits = t.hits || fresh.f, "
  "answered = t.answered + cardinality(fresh.f) FROM s, fresh WHERE t.id = s.id) "
  "SELECT (SELECT count(*) FROM s), (SELECT f FROM fresh)"};

/// Forgets sessions idle two TTLs ($1: the newest use forgotten), and of the live ones ($2: the
/// oldest use that is), the least recently used past the bound on sessions ($4), on held hits ($3)
/// or on the sessions of their owner ($5); answers how many live ones it leaves. One sweep at a time
/// in the cluster: it holds an advisory lock (its key: the migration lock's plus one,
/// storage/postgresql/schema.cpp) for its statement; another node's sweep meanwhile skips. The count
/// is of the statement's snapshot (its reads do not see its own delete, hence the subtraction):
/// sessions opened meanwhile are the next sweep's, so the count of a sweep is within the bounds.
/// Also answers how many it removed (0 when another node's sweep held the lock).
const statement sessions_sweep{
  "WITH lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(7362846102834652) AS got), "
  "gone AS (DELETE FROM search_sessions WHERE (SELECT got FROM lock) AND id IN ("
  "SELECT id FROM search_sessions WHERE last_used_ms <= $1 UNION ALL "
  "SELECT id FROM (SELECT id, sum(answered) OVER w AS held, row_number() OVER w AS n, row_number() OVER "
  "(PARTITION BY tenant, sub, client_id ORDER BY last_used_ms DESC, id DESC) AS mine FROM search_sessions "
  "WHERE last_used_ms > $2 WINDOW w AS (ORDER BY last_used_ms DESC, id DESC)) live "
  "WHERE held > $3 OR n > $4 OR mine > $5) RETURNING last_used_ms) "
  "SELECT (SELECT count(*) FROM search_sessions WHERE last_used_ms > $2) "
  "- (SELECT count(*) FROM gone WHERE last_used_ms > $2), (SELECT count(*) FROM gone)"};

/// The sessions table churns (under load, every search inserts a row that a sweep soon deletes):
/// autovacuum, which looks at a table at most once a minute by default, let it grow to several
/// times its live rows within a minute, and every sweep reads the whole heap. The sweeper that
/// removed as many rows as the table holds live ones (at least `vacuum_after_removed`) vacuums it
/// itself, so the heap stays about twice the live sessions and a vacuum's cost per removed row
/// stays flat. SKIP_LOCKED: a vacuum under way (another node's, autovacuum's) is not waited for.
constexpr std::uint64_t vacuum_after_removed = 2000;
constexpr const char* sessions_vacuum = "VACUUM (SKIP_LOCKED) search_sessions";

/// `ids` each once, in order.
std::vector<std::string> each_once(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  std::unordered_set<std::string> seen;
  for (const auto& h : ids)
    if (seen.insert(h).second) out.push_back(h);
  return out;
}

/// The longest time between two sweeps: how long a principal's sessions may stay past their bound.
constexpr std::int64_t sweep_at_most_ms = 5000;
/// The shortest: a sweep reads every session.
constexpr std::int64_t sweep_at_least_ms = 1000;

std::string boolean(bool b) { return b ? "true" : "false"; }

/// How long after its id was made a session not found may still be on its way from another node's
/// writer (which writes as soon as its statement before is done: a few milliseconds under load).
constexpr std::int64_t open_window_ms = 500;
/// Sessions opened and not yet written, at most: past it an open waits for the writer.
constexpr std::size_t max_unwritten = 10000;

/// A session to write: one element of each of sessions_open's arrays.
struct open_row {
  std::string id, tenant, sub, client_id, query, types, languages, work_id, usable_only, position, last_used_ms, hits;
};

std::int64_t now_millis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

/// A bound as a statement parameter: 0 (none) as the largest number.
std::string bound(std::size_t n) { return n == 0 ? num(std::int64_t{INT64_MAX}) : num(static_cast<std::uint64_t>(n)); }

class postgresql_sessions final : public domain::session_store {
public:
  postgresql_sessions(const postgresql_settings& s, const domain::session_limits& limits, std::size_t connections)
    : limits_(limits),
      pool_(s.url, s.password, std::max<std::size_t>(1, connections) + 1, s.wait, s.replan_after, s.answer_wait),
      db_(pool_),
      sweep_every_ms_(std::clamp<std::int64_t>(limits.ttl_ms / 2, sweep_at_least_ms, sweep_at_most_ms)),
      writer_([this] { write_opens(); }) {}

  ~postgresql_sessions() override {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      stopping_ = true;
    }
    queued_.notify_all();
    writer_.join();  // what was opened is written first
  }

  /// Queues the session for the writer and answers at once.
  std::vector<std::string> opened(const std::string& id, const domain::session_owner& owner,
                                  domain::search_request request, std::uint64_t position,
                                  const std::vector<std::string>& hit_ids, std::int64_t now_ms) override {
    auto hits = each_once(hit_ids);
    open_row row{id, owner.tenant, owner.sub, owner.client_id, std::move(request.query),
                 pg::array_literal(request.types), pg::array_literal(request.languages), request.work_id,
                 boolean(request.usable_only), num(position), num(now_ms), pg::array_literal(hits)};
    std::unique_lock<std::mutex> lock{mutex_};
    written_.wait(lock, [&] { return unwritten_.size() < max_unwritten; });
    unwritten_.insert(id);
    queue_.push_back(std::move(row));
    ++queued_total_;
    lock.unlock();
    queued_.notify_one();
    return hits;
  }

  domain::found_session find(const std::string& id, const domain::session_owner& owner, std::int64_t now_ms) override {
    auto look = [&] {
      return db_.run(session_find, {id, owner.tenant, owner.sub, owner.client_id, num(now_ms), num(now_ms - limits_.ttl_ms)});
    };
    bool queued_here = unwritten(id);  // asked before the first look: a write ending between them is seen
    auto r = look();
    // Not there yet: opened here and not written (wait for the writer), or opened on another node
    // within the window (poll).
    if (r.empty() && queued_here) {
      wait_written(id);
      r = look();
    }
    for (std::int64_t pause = 1; r.empty() && opened_elsewhere_lately(id); pause = std::min<std::int64_t>(pause * 2, 50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds{pause});
      r = look();
    }
    if (r.empty()) return {std::nullopt, domain::session_miss::unknown};
    auto last_used = r.integer(0, 6);
    // As in memory: expired for one TTL, then forgotten (the sweep removes it).
    if (last_used + limits_.ttl_ms <= now_ms)
      return {std::nullopt, last_used + 2 * limits_.ttl_ms > now_ms ? domain::session_miss::expired : domain::session_miss::unknown};
    domain::search_session s;
    s.id = id;
    s.owner = owner;
    s.request.query = r.str(0, 0);
    s.request.types = pg::parse_array(r.text(0, 1));
    s.request.languages = pg::parse_array(r.text(0, 2));
    s.request.work_id = r.str(0, 3);
    s.request.usable_only = r.text(0, 4) == "t";
    s.position = static_cast<std::uint64_t>(r.integer(0, 5));
    s.last_used_ms = std::max(last_used, now_ms);
    if (!r.is_null(0, 7))
      for (auto& h : pg::parse_array(r.text(0, 7))) s.returned.insert(std::move(h));
    return {std::move(s), domain::session_miss::unknown};
  }

  std::vector<std::string> answered(const std::string& id, const domain::session_owner& owner,
                                    const std::vector<std::string>& hit_ids, std::int64_t now_ms) override {
    if (hit_ids.empty()) return {};
    wait_written(id);  // a page finds its session first; this holds without
    auto asked = each_once(hit_ids);
    auto r = db_.run(session_answered, {id, owner.tenant, owner.sub, owner.client_id, pg::array_literal(asked),
                                        num(now_ms - limits_.ttl_ms), num(now_ms)});
    if (r.integer(0, 0) == 0) return asked;  // gone meanwhile: nothing left to repeat them
    return pg::parse_array(r.text(0, 1));
  }

  std::size_t size() const override { return live_.load(); }

  /// Every half TTL, or every `sweep_at_most_ms` when that is shorter, at least a second apart.
  std::int64_t sweep_every_ms() const override { return sweep_every_ms_; }

  /// One node at a time: another node's sweep meanwhile skips (the statement's advisory lock).
  bool sweep(std::int64_t now_ms) override {
    {  // the sessions opened before it count: it waits for their writes
      std::unique_lock<std::mutex> lock{mutex_};
      auto target = queued_total_;
      written_.wait(lock, [&] { return written_total_ >= target; });
    }
    auto left = db_.run(sessions_sweep, {num(now_ms - 2 * limits_.ttl_ms), num(now_ms - limits_.ttl_ms),
                                         bound(limits_.max_held_hits), bound(limits_.max_sessions),
                                         bound(limits_.max_per_principal)});
    live_ = static_cast<std::size_t>(left.integer(0, 0));
    removed_since_vacuum_ += static_cast<std::uint64_t>(left.integer(0, 1));
    if (removed_since_vacuum_ < std::max<std::uint64_t>(vacuum_after_removed, live_.load())) return false;
    try {
      pool_.acquire()->exec(sessions_vacuum);
      removed_since_vacuum_ = 0;
      return true;
    } catch (const std::exception& e) {  // the next sweep tries again
      spdlog::warn("search sessions: the sessions table was not vacuumed: {}", e.what());
      return false;
    }
  }

private:
  /// Whether `id` was opened here and is not yet written.
  bool unwritten(const std::string& id) {
    std::lock_guard<std::mutex> guard{mutex_};
    return unwritten_.count(id) > 0;
  }

  /// Waits until `id`, if opened here, is written (or its write failed).
  void wait_written(const std::string& id) {
    std::unique_lock<std::mutex> lock{mutex_};
    written_.wait(lock, [&] { return !unwritten_.count(id); });
  }

  /// Whether `id` was made within open_window_ms (by this node's clock): another node's writer may
  /// not have written it yet.
  static bool opened_elsewhere_lately(const std::string& id) {
    auto made = domain::id_millis(id, "srch_");
    if (!made) return false;
    auto age = now_millis() - *made;
    return age >= -open_window_ms && age < open_window_ms;
  }

  /// The writer thread: every session queued since its last statement, in one statement. A write
  /// that fails loses those sessions (their next page: 404 SEARCH_SESSION_NOT_FOUND, the search is
  /// started again; their first pages were answered); the writer goes on with the next.
  void write_opens() {
    std::unique_lock<std::mutex> lock{mutex_};
    for (;;) {
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, everything written
      auto batch = std::move(queue_);
      queue_.clear();
      lock.unlock();
      std::vector<std::vector<std::string>> columns(12);
      for (auto& column : columns) column.reserve(batch.size());
      for (auto& r : batch) {
        std::string* fields[] = {&r.id,        &r.tenant,   &r.sub,         &r.client_id, &r.query,        &r.types,
                                 &r.languages, &r.work_id,  &r.usable_only, &r.position,  &r.last_used_ms, &r.hits};
        for (std::size_t i = 0; i < columns.size(); ++i) columns[i].push_back(std::move(*fields[i]));
      }
      std::vector<std::string> p;
      for (const auto& column : columns) p.push_back(pg::array_literal(column));
      try {
        db_.run(sessions_open, {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]});
      } catch (const std::exception& e) {
        spdlog::warn("search sessions: {} opened sessions not written (their next page is 404): {}", batch.size(),
                     e.what());
      }
      lock.lock();
      for (const auto& id : columns[0]) unwritten_.erase(id);
      written_total_ += columns[0].size();
      written_.notify_all();
    }
  }

  domain::session_limits limits_;
  pg::pool pool_;
  pg::pooled_session db_;
  std::int64_t sweep_every_ms_;
  std::atomic<std::size_t> live_{0};
  std::uint64_t removed_since_vacuum_ = 0;  ///< by this node's sweeps (one sweeper thread)
  std::mutex mutex_;
  std::condition_variable queued_, written_;
  std::vector<open_row> queue_;                ///< opened, not yet taken by the writer
  std::unordered_set<std::string> unwritten_;  ///< ids queued or being written
  std::uint64_t queued_total_ = 0, written_total_ = 0;  ///< opens queued and written (or failed), ever
  bool stopping_ = false;
  std::thread writer_;  ///< last: starts once the rest is ready
};

}  // namespace

std::shared_ptr<domain::session_store> open_postgresql_sessions(const postgresql_settings& settings,
                                                                const domain::session_limits& limits,
                                                                std::size_t connections) {
  return std::make_shared<postgresql_sessions>(settings, limits, connections);
}

}  // namespace cl::storage
