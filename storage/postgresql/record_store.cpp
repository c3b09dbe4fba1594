// The record store on PostgreSQL: typed stores over committed state (a pooled connection per
// statement), the group commit (one transaction; savepoints per mutation when a batch needs them) and the
// change log.
//
// The change log is numbered without gaps by a single-writer allocation: a batch's entries are
// kept in memory while its mutations run, and only at the end does the transaction take the log
// head's row lock (`UPDATE change_head SET seq = seq + n RETURNING seq`), write its entries with
// the numbers that follow and commit. The lock is held from that update to the commit, so
// transactions that log commit in the order of their numbers: a reader that sees entry n has seen
// every entry before it, on any node (docs/architecture.md, "The change log on PostgreSQL").
//
// How the PostgreSQL backend works inside (docs/architecture.md, "The PostgreSQL backend", says what and why):
//
// - **Write path.** A group commit is one transaction, and a mutation that fails or refuses loses only
//   its own changes (LMDB: a nested transaction per mutation). A batch runs first without savepoints:
//   a refusal that wrote nothing needs none. When a mutation threw, lost a race or refused after
//   writing, the transaction rolls back and the batch runs again with a savepoint per mutation (so do
//   the next 16 batches): a savepoint costs two statements, a round trip and a subtransaction. A
//   mutation that loses to another transaction (SQLSTATE 23505/40001/40P01, or a Resource's
//   `UPDATE ... WHERE version = $seen` finding no row) runs again and sees what won: the ledger's key
//   (tenant, client, key) gives two nodes racing one `Idempotency-Key` one effect. Writes whose rows
//   nobody reads (`session::send`) go out in libpq's pipeline mode with the next statement waited
//   for; an error of one surfaces there, and the savepoint run finds whose it was. BEGIN travels
//   with the first statement waited for, and the change-log append with the COMMIT: a batch whose
//   mutations read nothing (a create, keyed or not) is one round trip. A batch whose connection broke
//   before its COMMIT was sent (a restarted server, found wherever the batch first waits) committed
//   nothing and runs once more on a new connection; after the COMMIT was sent the outcome is unknown
//   (503; a retry with the same `Idempotency-Key` replays).
// - **No look-ups a create does not need.** A keyed write whose only effect is its guarded write
//   (the route says so: `http::write_only`; Resources, Works, grants, contracts; not uploads, webhooks
//   or search) is not looked up before it runs on PostgreSQL: the ledger holds its key "unchecked",
//   and in a batch without savepoints the ledger store answers the key as absent without reading it.
//   When a record is there after all (a retry, another node's, one past retention not pruned yet) the
//   record's INSERT fails the batch, which runs again with savepoints, reads it and answers from it.
//   A request that ran unchecked and was answered by anything but its guarded write (a refusal
//   before it, a failure) asks the ledger (`check`) before its answer leaves, so a refusal never
//   hides a stored answer. Each ledger shard remembers up to 16,384 keys it saw stored, replayed or
//   mismatched, and looks those up first: a client retrying one key in a loop reaches the writer once
//   per node, not per retry (tests/e2e/idempotency_test.cpp: 21 retries after a restart, at most one
//   more mutation). The trade: a retry of a key the node does not remember costs a batch rerun with
//   savepoints (and savepoints for the next 16 batches) instead of a look-up; a look-up costs every
//   keyed create a round trip. On LMDB a look-up is a page read, and every key is looked up. The caller's agent is written
//   with `catalog put_if_absent` (`INSERT ... ON CONFLICT DO NOTHING`, sent without waiting), and not
//   at all for a key the writer saw committed: nothing removes a catalog record, so the writer keeps
//   the keys it committed (`lasting_keys`, bounded; learnt only at a commit).
// - **Writer lanes.** LMDB has one writer; PostgreSQL commits several transactions at once, so on it
//   the writer is `storage.postgresql.writers` (2) lanes behind one handle (`writer_lanes`), each its
//   own group commit on its own connection. A write goes to its sender's lane: an actor's writes
//   (a request's, the indexer's, the ledger's) keep the order it sent them in; writes of different
//   requests never had one. Lanes meet only where they must: at a row both write (the later waits,
//   then loses its compare-and-set or its unique key and runs again), at a row a write reads in order
//   to change it (a webhook endpoint, a contract's latest version, an upload, a grant and the
//   Resource's other owners: read `FOR UPDATE` in a write, so the later waits and reads what the
//   earlier committed, and no check passes on what another node is changing; an owner's webhooks
//   are counted under an advisory lock of that owner's), and at the change log's head lock from the
//   log append to the COMMIT. Cache drops, `known_change` and the commit listeners take positions in
//   any order (the listeners only wake).
// - **The hot-record cache** (`storage/postgresql/hot_records.hpp`). Resources read lately, record and
//   typed header, keyed by (tenant, id); `storage.postgresql.cache_mib` (64) bounds it, least
//   recently read out first (`contentlake_postgresql_cache_bytes`). What a batch wrote leaves it after the COMMIT and before the writer
//   answers; a follower thread reads the change log every 100 ms and drops what other nodes changed
//   (the bound on staleness for their writes), and moves `known_change` on: the position a read
//   reports without asking the database. A miss reserves its key and fills it only if the key was not
//   dropped since (a read that raced a commit is not kept).
// - **Reads on replicas** (`storage.postgresql.replica_url`; storage/postgresql/replicas.hpp). The
//   committed reads of the stores whose every write logs change-log entries (Resources but their
//   versions, grants, contracts: `context::reads`) run on a replica once it has replayed the log to
//   `replica_floor()`: what the node knows committed (its own commits, its follower's reads, a
//   request's position, which the request reached first, the entries a consumer such as the indexer
//   was given) and every change that may have left the hot-record cache (`dropping_through_`, raised
//   before the drops: a miss that refills the cache never brings back a version older than one
//   dropped). Every other store reads the primary: a write that logs nothing (a webhook delivery's,
//   an upload's, the ledger's) has no position a replica could be asked for. So does everything
//   while the caches are past max_lag (a revocation elsewhere is honoured within that bound).
// - **Failing over.** A statement on a server that is not the primary (SQLSTATE 25006) gives its
//   connection up like a broken one: 503, and the next connection finds the primary.
// - **The change log, gap-free across nodes.** Entries wait in memory until the batch ends; then one
//   statement moves the head (`UPDATE change_head SET seq = seq + n RETURNING seq`, taking its row
//   lock) and inserts the entries with the n numbers up to it (a data-modifying CTE over `unnest`),
//   sent with the COMMIT. The lock is held from that update to the commit only, so logging
//   transactions commit in number order: a reader at n has seen every entry below n, on every node.
//   Numbers are the same dense sequence as on LMDB (cursors keep their form).
// - **Schema.** Numbered migrations per schema part, applied at start in one transaction under an
//   advisory lock (newer than the binary: refused). Keys `text COLLATE "C"` (byte order, as LMDB);
//   records `text`, the canonical bytes unchanged. Statements prepared per connection, a small pool.
// - **Plans that hold as tables grow.** PostgreSQL keeps a prepared statement's plan until a table's
//   statistics change, and autovacuum analyzes at most once a minute; a plan made while a new
//   database was tiny can walk a whole tenant (an index on the tenant alone, filtering) once the
//   tables have grown, and a tenant the statistics have not seen yet (estimated at a row or two) can
//   be walked by a join or an `id = ANY($2)` look-up. Three defences: a page by a secondary key
//   states its position as a row on that index's columns (`(resource_id, principal) > ($2, $3)`),
//   which no other index can bound; joins and many-key look-ups probe each row by its whole key (a
//   `LATERAL` subquery with `OFFSET 0` the planner cannot merge; keys `unnest`ed; the blob references
//   a Resource's write drops are deleted by their whole key, taken from the row as it was, since the
//   blob index leads with the blob); and a connection
//   prepares a statement again after 1,000 uses (`postgresql_settings::replan_after`).
// - **What differs.** A read of committed state that misses the cache is a statement on a pooled
//   connection (LMDB: a read transaction, no round trip); the change feed reads a page's grants and
//   Works in one statement each, the search indexer a chunk of 100 Resources' records and their
//   grantees in one statement each (`records_of`, `principals_on`; LMDB: a read each), not through
//   the hot-record cache; `storage_*` capacity gauges are LMDB's only; a statement waits at most
//   `storage.postgresql.answer_wait_ms` for its answer (libpq's calls, made with a `poll` deadline
//   of our own: libpq has none for a server that keeps the socket open and says nothing), and after
//   a connection could not be made or an answer did not come the pool refuses at once for up to 5 s
//   (the health probe, every second, ends that when the database answers): cold reads run on the
//   scheduler's threads, and a silent database must not hold them, or no request is answered, not
//   even at its deadline; a database that cannot
//   be reached answers 503 and fails `/readyz`. Its figures against LMDB: docs/benchmarks.md.

#include "storage/postgresql/postgresql_store.hpp"

#include "domain/clock.hpp"
#include "storage/commit_listeners.hpp"
#include "storage/postgresql/backend.hpp"
#include "domain/aead.hpp"
#include "domain/base64url.hpp"
#include "storage/postgresql/hot_records.hpp"
#include "storage/postgresql/replicas.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace cl::storage::pg {

namespace {

std::unique_ptr<typed_store> make_store(std::size_t slot, const context& c) {
  return store_registry<context>::of().make(slot, c);
}

/// Runs statements on the transaction's connection, counting those that write.
class counting_session final : public session {
public:
  explicit counting_session(const connection& c) : c_(c) {}
  using session::run;
  rows run(const statement& s, std::initializer_list<std::string_view> params) const override {
    auto r = c_.run(s, params);
    if (std::strncmp(s.sql, "SELECT", 6) != 0) ++count;
    return r;
  }
  void send(const statement& s, std::initializer_list<std::string_view> params) const override {
    c_.send(s, params);
    ++count;
  }
  mutable std::uint64_t count = 0;

private:
  const connection& c_;
};

const statement head_locked{"SELECT seq FROM change_head FOR UPDATE"};
const statement head_read{"SELECT seq, timeline FROM change_head"};
// The head moves on by the batch's n entries (taking its row lock, held to the COMMIT sent right
// after) and the entries take the n numbers up to it; each names its mutation's first entry as
// its transaction ($2: that entry's offset in the batch). The head is stamped with the primary's
// timeline (the one its WAL is written on now, from the WAL file's name: pg_control's lags a
// promotion until the next checkpoint), which replica reads compare (replicas.hpp). Answers the
// head, the last number written, and the timeline.
const statement log_append{
  "WITH h AS (UPDATE change_head SET seq = seq + $1, "
  "timeline = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint RETURNING seq, timeline), "
  "e AS (INSERT INTO change_log (seq, transaction, tenant, kind, id, op, at_ms, version, hash, principal) "
  "SELECT h.seq - $1 + u.n, h.seq - $1 + 1 + u.first, u.tenant, u.kind, u.id, u.op, u.at_ms, u.version, u.hash, "
  "u.principal FROM h, unnest($2::bigint[], $3::text[], $4::smallint[], $5::text[], $6::smallint[], $7::bigint[], "
  "$8::text[], $9::text[], $10::text[]) WITH ORDINALITY AS u(first, tenant, kind, id, op, at_ms, version, hash, principal, n)) "
  "SELECT seq, timeline FROM h"};
// Entries after $1, and the timeline of the head in the same snapshot (the node learns it with
// every position it learns).
const statement log_read{
  "SELECT seq, transaction, tenant, kind, id, op, at_ms, version, hash, principal, "
  "(SELECT timeline FROM change_head) FROM change_log WHERE seq > $1 ORDER BY seq LIMIT $2"};
const statement consumer_put{
  "INSERT INTO change_consumers (name, applied, acknowledged_ms) VALUES ($1, $2, $3) "
  "ON CONFLICT (name) DO UPDATE SET applied = EXCLUDED.applied, acknowledged_ms = EXCLUDED.acknowledged_ms"};
const statement consumer_erase{"DELETE FROM change_consumers WHERE name = $1"};
const statement consumer_list{"SELECT name, applied, acknowledged_ms FROM change_consumers ORDER BY name"};
// Oldest first, never past the first entry still too new, never what a consumer still needs, and
// never the newest entry (as on LMDB).
const statement log_prune{
  "DELETE FROM change_log WHERE seq IN (SELECT seq FROM change_log WHERE at_ms < $1 "
  "AND seq <= (SELECT coalesce(min(applied), 9223372036854775807) FROM change_consumers) "
  "AND seq < coalesce((SELECT min(seq) FROM change_log WHERE at_ms >= $1 AND at_ms <> 0), 9223372036854775807) "
  "AND seq < (SELECT max(seq) FROM change_log) ORDER BY seq LIMIT $2)"};

/// Typed stores over one session, made when first asked for.
class store_set {
public:
  store_set(const session& db, bool writable, const read_view& view, hot_records* hot, batch_hooks* batch,
            const session* replica = nullptr)
    : db_(db), writable_(writable), view_(view), hot_(hot), batch_(batch), replica_(replica) {}
  typed_store& at(store_kind kind) const {
    std::lock_guard<std::mutex> guard{mutex_};
    if (stores_.size() <= kind.slot) stores_.resize(kind.slot + 1);
    auto& s = stores_[kind.slot];
    if (!s) s = make_store(kind.slot, context{db_, writable_, view_, hot_, batch_, replica_});
    return *s;
  }

private:
  const session& db_;
  bool writable_;
  const read_view& view_;
  hot_records* hot_;
  batch_hooks* batch_;
  const session* replica_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<typed_store>> stores_;
};

/// The entries a batch logged, kept until the commit numbers them.
struct batch_log {
  std::vector<change_entry> entries;
  std::vector<std::size_t> first_of_mutation;  ///< per entry: the index of its mutation's first entry
  std::optional<std::uint64_t> locked_head;     ///< the head read under its lock, once taken
  std::uint64_t timeline = 0;                   ///< the timeline its commit stamped the head with
  batch_hooks hooks;                            ///< what the stores note for after the batch
};

/// What one mutation sees: the stores over the transaction, and the batch's log.
class pg_write_view final : public write_txn {
public:
  pg_write_view(const connection& c, batch_log& log)
    : db_(c), c_(c), log_(log), first_(log.entries.size()), stores_(db_, true, *this, nullptr, &log.hooks) {}

  std::uint64_t writes() const override { return db_.count + (log_.entries.size() - first_); }

  void log_change(const change_entry& entry) override {
    log_.entries.push_back(entry);
    log_.first_of_mutation.push_back(first_);
  }

  std::uint64_t last_logged() const override {
    // Under the head's lock (held to the commit), the entries this batch logs are numbered right
    // after the head: nothing another node commits can come between.
    if (!log_.locked_head) log_.locked_head = static_cast<std::uint64_t>(c_.run(head_locked).integer(0, 0));
    return *log_.locked_head + log_.entries.size();
  }

  void acknowledge_changes(std::string_view name, std::uint64_t applied) override {
    db_.run(consumer_put, {name, num(applied), num(domain::now_ms())});
  }

  void forget_consumer(std::string_view name) override { db_.run(consumer_erase, {name}); }

  void prune_changes(std::int64_t cutoff_ms, std::size_t limit) override {
    db_.run(log_prune, {num(cutoff_ms), num(static_cast<std::uint64_t>(limit))});
  }

protected:
  const typed_store& find_store(store_kind kind) const override { return stores_.at(kind); }
  typed_store& find_store_to_write(store_kind kind) override { return stores_.at(kind); }

private:
  counting_session db_;
  const connection& c_;
  batch_log& log_;
  std::size_t first_;
  store_set stores_;
};

std::vector<change_entry> decode_entries(const rows& r) {
  std::vector<change_entry> out;
  out.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    change_entry e;
    e.seq = static_cast<std::uint64_t>(r.integer(i, 0));
    e.transaction = static_cast<std::uint64_t>(r.integer(i, 1));
    e.tenant = r.str(i, 2);
    e.kind = static_cast<change_kind>(r.integer(i, 3));
    e.id = r.str(i, 4);
    e.op = static_cast<change_op>(r.integer(i, 5));
    e.at_ms = r.integer(i, 6);
    e.version = r.str(i, 7);
    e.hash = r.str(i, 8);
    e.principal = r.str(i, 9);
    out.push_back(std::move(e));
  }
  return out;
}

/// Commits the batch: its change-log entries numbered after the head, and the COMMIT, sent with
/// whatever the batch still has queued, in one round trip. Answers the last number written (0 when
/// the batch logged nothing). `commit_sent` turns true before the COMMIT leaves: from then on a
/// lost connection leaves the outcome unknown.
std::uint64_t commit(const connection& c, batch_log& log, bool& commit_sent) {
  if (log.entries.empty()) {
    commit_sent = true;
    c.exec("COMMIT");
    return 0;
  }
  std::vector<std::string> cols[9];
  for (std::size_t i = 0; i < log.entries.size(); ++i) {
    const auto& e = log.entries[i];
    cols[0].push_back(std::to_string(log.first_of_mutation[i]));
    cols[1].push_back(e.tenant);
    cols[2].push_back(std::to_string(static_cast<int>(e.kind)));
    cols[3].push_back(e.id);
    cols[4].push_back(std::to_string(static_cast<int>(e.op)));
    cols[5].push_back(std::to_string(e.at_ms));
    cols[6].push_back(e.version);
    cols[7].push_back(e.hash);
    cols[8].push_back(e.principal);
  }
  std::string a[9];
  for (int i = 0; i < 9; ++i) a[i] = array_literal(cols[i]);
  commit_sent = true;
  auto r = c.run_and_commit(log_append, {num(static_cast<std::uint64_t>(log.entries.size())), a[0], a[1], a[2], a[3],
                                         a[4], a[5], a[6], a[7], a[8]});
  log.timeline = static_cast<std::uint64_t>(r.integer(0, 1));
  return static_cast<std::uint64_t>(r.integer(0, 0));
}

/// Runs one mutation with no savepoint. False when it needs one: it threw, or refused after
/// writing (its writes cannot be undone alone). A refusal that wrote nothing needs none.
bool run_plain(const connection& c, const mutation& m, batch_log& log, std::vector<bool>::reference kept) {
  auto entries_before = log.entries.size();
  pg_write_view view{c, log};
  bool ok = false;
  try {
    ok = m(view);
  } catch (const store_full&) {
    throw;
  } catch (const unavailable&) {
    throw;
  } catch (const std::exception&) {
    return false;
  }
  if (ok) {
    kept = true;
    return true;
  }
  if (view.writes() != 0) return false;
  log.entries.resize(entries_before);
  log.first_of_mutation.resize(entries_before);
  return true;
}

/// Runs one mutation under its own savepoint: refused or failed, it loses only its own changes.
/// One that lost to another transaction (a unique key taken, a compare-and-set that found another
/// version) runs again, now seeing what won. Its writes travel in the connection's pipeline with
/// the reads it waits for; the RELEASE waits for the last of them, so an error of any lands here.
bool run_one(const connection& c, const mutation& m, batch_log& log) {
  for (int attempt = 0;; ++attempt) {
    c.send_exec("SAVEPOINT m");
    auto entries_before = log.entries.size();
    auto ensured_before = log.hooks.ensured.size();
    bool had_head = log.locked_head.has_value();  // a lock taken under the savepoint goes with it
    auto undo = [&] {
      c.discard();
      c.exec("ROLLBACK TO SAVEPOINT m");
      log.entries.resize(entries_before);
      log.first_of_mutation.resize(entries_before);
      log.hooks.ensured.resize(ensured_before);
      if (!had_head) log.locked_head.reset();
    };
    bool kept = false;
    try {
      pg_write_view view{c, log};
      if (m(view)) {
        c.exec("RELEASE SAVEPOINT m");
        kept = true;
      }
    } catch (const conflict&) {
      if (attempt < 3) {
        undo();
        continue;
      }
    } catch (const store_full&) {
      throw;  // no room: the whole group fails
    } catch (const unavailable&) {
      throw;  // the connection is gone: so is the transaction
    } catch (const std::exception&) {
    }
    if (kept) return true;
    undo();
    return false;
  }
}

class pg_record_store final : public record_store {
public:
  explicit pg_record_store(const postgresql_settings& s)
    : pool_(s.url, s.password, s.pool_size, s.wait, s.replan_after, s.answer_wait),
      reads_(pool_),
      held_(pool_, [this]() -> std::optional<read_floor> { return floor(); }),
      replicas_(replicas_of(s)),
      hot_(s.cache_bytes),
      stores_(reads_, false, *this, s.cache_bytes ? &hot_ : nullptr, nullptr,
              replicas_ ? static_cast<const session*>(replicas_.get()) : &held_),
      max_lag_(s.max_lag) {
    {
      auto c = pool_.acquire();
      connection::waiting long_enough{*c, std::chrono::hours{24}};  // a migration may rewrite big tables
      description_ = migrate(*c);
      // The deployment's identity: made by the first node to open the database, kept in it.
      static const statement claim{"INSERT INTO cluster_facts (name, value) VALUES ('deployment_id', $1) "
                                   "ON CONFLICT (name) DO NOTHING"};
      static const statement read{"SELECT value FROM cluster_facts WHERE name = 'deployment_id'"};
      c->run(claim, {domain::hex_encode(domain::random_bytes(16))});
      deployment_ = c->run(read).str(0, 0);
    }
    caught_up_ms_.store(steady_ms());
    followed_ = last_change();
    hot_.trust_while([this] { return caches_current(); });
    if (s.own_threads) follower_ = std::thread{[this, every = s.follow_interval] { follow_on_thread(every); }};
    else follow_every_ = s.follow_interval;
  }

  ~pg_record_store() override {
    {
      std::lock_guard<std::mutex> guard{stop_mutex_};
      stopping_ = true;
    }
    stop_.notify_all();
    if (follower_.joinable()) follower_.join();
  }

  std::vector<bool> apply(const std::vector<mutation>& batch) override {
    // A batch runs first without savepoints; one that needed one (a mutation that threw, lost a
    // race, or refused after writing) is rolled back and run again with a savepoint per mutation,
    // as are the next few batches.
    //
    // A batch whose connection broke before its COMMIT was sent (the server restarted since the
    // connection was last used: the idle ones are stale too) committed nothing: it runs once more
    // on a new connection. After the COMMIT was sent the outcome is unknown: the caller answers 503.
    bool commit_sent = false;
    try {
      return apply_once(batch, commit_sent);
    } catch (const no_answer&) {
      throw;  // the server is there but silent: another connection would wait as long again
    } catch (const unavailable&) {
      if (commit_sent) throw;
    }
    pool_.drop_idle();
    return apply_once(batch, commit_sent);
  }

  std::uint64_t last_change() const override {
    auto r = reads_.run(head_read);
    auto head = static_cast<std::uint64_t>(r.integer(0, 0));
    raise_to(timeline_, static_cast<std::uint64_t>(r.integer(0, 1)));
    advance_known(head);
    return head;
  }

  std::uint64_t known_change() const override { return known_.load(std::memory_order_acquire); }

  std::chrono::milliseconds log_lag() const override {
    return std::chrono::milliseconds{std::max<std::int64_t>(0, steady_ms() - caught_up_ms_.load())};
  }

  bool caches_current() const override { return log_lag() <= max_lag_; }

  std::string describe() const override { return description_; }

  std::string deployment_id() const override { return deployment_; }

  void adopt_deployment_id(const std::string& id) override {
    static const statement adopt{"UPDATE cluster_facts SET value = $1 WHERE name = 'deployment_id'"};
    reads_.run(adopt, {id});
    deployment_ = id;
  }

  /// A hot-record cache hit; a miss (or an absent Resource, which is not kept) is read by the reader.
  instant_resource resource_at_once(const std::string& tenant, const std::string& id) const override {
    instant_resource out;
    out.log_position = known_change();
    if (auto hit = hot_.find(hot_records::key(tenant, id))) {
      out.record = std::move(hit->record);
      out.answered = true;
    }
    return out;
  }

  bool reflects_now(std::uint64_t position) const override { return followed() >= position; }

  std::chrono::milliseconds follow_every() const override { return follow_every_; }

  void follow() override { follow_once(); }

  bool reflects(std::uint64_t position) override {
    if (followed() >= position) return true;
    follow_once();
    return followed() >= position;
  }

  std::uint64_t followed() const {
    std::lock_guard<std::mutex> guard{follow_mutex_};
    return followed_;
  }

  bool probe() const override {
    try {
      // A short wait of its own: /readyz turns false within about 2 s of the database going silent.
      // It tries even while the pool refuses, and ends that as soon as the database answers.
      auto c = pool_.acquire(true);
      c->run_within(head_read, std::min(pool_.answer_wait(), std::chrono::milliseconds{2000}));
      pool_.reachable();
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  std::vector<change_entry> read_from(std::uint64_t after, std::size_t limit) const override {
    auto r = reads_.run(log_read, {num(after), num(static_cast<std::uint64_t>(limit))});
    if (!r.empty()) raise_to(timeline_, static_cast<std::uint64_t>(r.integer(0, 10)));  // before any position
    auto entries = decode_entries(r);
    // A consumer that read an entry (the indexer, webhook dispatch) reads what it names next: on
    // a replica only once that replica has it.
    if (!entries.empty()) raise_to(log_seen_, entries.back().seq);
    return entries;
  }

  std::uint64_t subscribe(commit_listener listener) override { return listeners_.add(std::move(listener)); }
  void unsubscribe(std::uint64_t handle) override { listeners_.remove(handle); }

  void watch_others(others_listener listener) override {
    std::lock_guard<std::mutex> guard{others_mutex_};
    others_.push_back(std::move(listener));
  }

  std::vector<change_consumer> consumers() const override {
    auto r = reads_.run(consumer_list);
    std::vector<change_consumer> out;
    for (std::size_t i = 0; i < r.size(); ++i)
      out.push_back({r.str(i, 0), static_cast<std::uint64_t>(r.integer(i, 1)), r.integer(i, 2)});
    return out;
  }

protected:
  const typed_store& find_store(store_kind kind) const override { return stores_.at(kind); }

private:
  /// Batches that run with a savepoint per mutation after one needed it.
  static constexpr int careful_batches = 16;

  std::vector<bool> apply_once(const std::vector<mutation>& batch, bool& commit_sent) {
    if (careful_.load(std::memory_order_relaxed) == 0) {
      if (auto kept = apply_batch(batch, false, commit_sent)) return std::move(*kept);
      careful_.store(careful_batches, std::memory_order_relaxed);
    } else {
      careful_.fetch_sub(1, std::memory_order_relaxed);
    }
    return *apply_batch(batch, true, commit_sent);
  }

  /// Runs `batch` in one transaction and commits it. With `savepoints`, each mutation under its
  /// own (`run_one`). Without, none: answers nothing (the transaction rolled back) as soon as a
  /// mutation would need one. A savepoint costs two statements and a subtransaction per mutation
  /// (past 64 in a transaction, every other session's snapshot checks get slower), and its RELEASE
  /// is a round trip: most batches need none. BEGIN travels with the batch's first statement waited
  /// for: a batch that reads nothing is one round trip with its COMMIT.
  std::optional<std::vector<bool>> apply_batch(const std::vector<mutation>& batch, bool savepoints, bool& commit_sent) {
    std::vector<bool> kept(batch.size(), false);
    commit_sent = false;  // a batch run before this one did not commit: it failed before or at its COMMIT
    auto c = pool_.acquire();
    c->send_exec("BEGIN");
    std::uint64_t last = 0;
    batch_log log;
    log.hooks.lasting = &lasting_;
    log.hooks.unread_keys = !savepoints;
    // What the batch wrote leaves the cache before the writer answers, committed or not (a lost
    // COMMIT may have committed).
    struct drop_touched {
      hot_records& hot;
      const std::vector<std::string>& keys;
      ~drop_touched() {
        for (const auto& k : keys) hot.drop(k);
      }
    } dropping{hot_, log.hooks.touched};
    auto roll_back = [&] {
      try {
        c->discard();
        if (c->healthy()) c->exec("ROLLBACK");
      } catch (...) {
      }
    };
    try {
      if (savepoints) {
        for (std::size_t i = 0; i < batch.size(); ++i) kept[i] = run_one(*c, batch[i], log);
        last = commit(*c, log, commit_sent);
      } else {
        try {
          for (std::size_t i = 0; i < batch.size(); ++i)
            if (!run_plain(*c, batch[i], log, kept[i])) {
              roll_back();
              return std::nullopt;
            }
          // A deferred write that failed fails the batch (the server skipped the COMMIT after it):
          // which mutation's, the savepoints will tell. So does a COMMIT that failed.
          last = commit(*c, log, commit_sent);
        } catch (const store_full&) {
          throw;
        } catch (const unavailable&) {
          throw;
        } catch (const std::exception&) {
          roll_back();
          return std::nullopt;
        }
      }
    } catch (...) {
      roll_back();
      throw;
    }
    if (last != 0) raise_to(timeline_, log.timeline);  // before any position it goes with
    if (last != 0) raise_to(dropping_through_, last);
    for (const auto& k : log.hooks.touched) hot_.drop(k);  // before the listeners hear of the commit
    log.hooks.touched.clear();
    lasting_.add(log.hooks.ensured);
    if (last != 0) {
      {
        std::lock_guard<std::mutex> guard{own_mutex_};
        // Lanes commit in log order but may get here in any: kept sorted for `own`.
        std::pair<std::uint64_t, std::uint64_t> range{last - log.entries.size() + 1, last};
        own_.insert(std::upper_bound(own_.begin(), own_.end(), range), range);
      }
      advance_known(last);
      listeners_.notify(last);
    }
    return kept;
  }

  /// Reads the change log every `every` until the store closes: drops from the hot-record cache what
  /// changed, written by this node or any other, and moves `known_change` on. A log pruned past what
  /// was followed (this node was away from the database longer than the retention) drops everything.
  void follow_on_thread(std::chrono::milliseconds every) {
    std::unique_lock<std::mutex> guard{stop_mutex_};
    while (!stop_.wait_for(guard, every, [&] { return stopping_; })) {
      guard.unlock();
      try {
        follow_once();
      } catch (const std::exception&) {
        // The database is away: reads fail as well; follow again when it is back.
      }
      guard.lock();
    }
  }

  /// Reads the log past what was followed, to its head (the follower's thread, or a request that
  /// sent a position this node has not followed to yet: one at a time).
  void follow_once() {
    std::lock_guard<std::mutex> guard{follow_mutex_};
    for (;;) {
      // Every change committed before this read began is in what it answers (or an earlier read's).
      auto began = steady_ms();
      auto entries = read_from(followed_, 1000);
      if (entries.size() < 1000) caught_up_ms_.store(std::max(caught_up_ms_.load(), began));
      if (entries.empty()) break;
      if (entries.front().seq != followed_ + 1) hot_.clear();
      std::vector<change_entry> others;
      raise_to(dropping_through_, entries.back().seq);
      for (auto& e : entries)
        if (!own(e.seq)) {
          if (e.kind == change_kind::resource) hot_.drop(hot_records::key(e.tenant, e.id));
          others.push_back(std::move(e));
        }
      followed_ = entries.back().seq;
      advance_known(followed_);
      if (!others.empty()) {
        for (const auto& watch : watching_others()) watch(others);
        listeners_.notify(followed_);
      }
      if (entries.size() < 1000) break;
    }
  }

  std::vector<others_listener> watching_others() const {
    std::lock_guard<std::mutex> guard{others_mutex_};
    return others_;
  }

  /// Whether this node logged entry `seq` (and so dropped what it wrote at its commit already): a
  /// Resource it wrote and read since stays cached. Asked in log order; forgets what is behind.
  bool own(std::uint64_t seq) {
    std::lock_guard<std::mutex> guard{own_mutex_};
    while (!own_.empty() && own_.front().second < seq) own_.pop_front();
    return !own_.empty() && own_.front().first <= seq;
  }

  /// Every entry up to `at` is committed (the log head was read, or this node committed up to it).
  void advance_known(std::uint64_t at) const { raise_to(known_, at); }

  static void raise_to(std::atomic<std::uint64_t>& value, std::uint64_t at) {
    auto seen = value.load(std::memory_order_relaxed);
    while (seen < at && !value.compare_exchange_weak(seen, at, std::memory_order_acq_rel)) {
    }
  }

  /// Reads on replicas (storage.postgresql.replica_url), when named.
  std::unique_ptr<replica_session> replicas_of(const postgresql_settings& s) {
    if (s.replica_url.empty()) return nullptr;
    return std::make_unique<replica_session>(s.replica_url, s.password, s.pool_size, s.replica_answer_wait, held_,
                                             [this]() -> std::optional<read_floor> { return replica_floor(); });
  }

  /// How far a replica must have replayed for a read now: whatever this node has told or may tell
  /// a client (`known`), every change whose Resource may have left the hot-record cache already
  /// (`dropping_through_`: a read that refills the cache must not bring back an older version), and
  /// every entry a consumer of the log was given (`log_seen_`: the indexer reads what it names).
  /// None while the node's caches are behind the log past max_lag: its reads then go to the primary,
  /// as they pass the caches by (a revocation on another node is honoured within that bound).
  /// On the timeline learned with those positions (each is raised after it), or a later one.
  std::optional<read_floor> replica_floor() const {
    if (!caches_current()) return std::nullopt;
    return floor();
  }

  /// What this node has seen committed (the floor of every read of the logged stores, on the
  /// primary too: `held_reads`).
  read_floor floor() const {
    read_floor f;
    f.position = std::max({known_.load(std::memory_order_acquire), dropping_through_.load(std::memory_order_acquire),
                           log_seen_.load(std::memory_order_acquire)});
    f.timeline = timeline_.load(std::memory_order_acquire);
    return f;
  }

public:
  postgresql_use use() const {
    postgresql_use u{pool_.in_use(), pool_.size(), hot_.bytes()};
    u.primary_behind = held_.refused();
    if (replicas_) {
      auto n = replicas_->counts();
      u.reads_on_replica = n.on_replica;
      u.reads_on_primary = n.on_primary;
      u.replica_behind = n.behind;
      u.replica_elsewhere = n.elsewhere;
    }
    return u;
  }

private:
  mutable pool pool_;  ///< hands out connections under its own lock
  pooled_session reads_;
  held_reads held_;  ///< the logged stores' reads on the primary, held to `floor`
  mutable std::atomic<std::uint64_t> known_{0};
  /// Changes up to here may have left the hot-record cache (raised before the drops).
  std::atomic<std::uint64_t> dropping_through_{0};
  /// The last change-log entry any reader of the log was given (`read_from`).
  mutable std::atomic<std::uint64_t> log_seen_{0};
  /// The latest timeline the log's head was seen stamped with (raised before the positions above).
  mutable std::atomic<std::uint64_t> timeline_{0};
  std::unique_ptr<replica_session> replicas_;
  mutable std::mutex follow_mutex_;  ///< one reader of the log at a time (`followed_`)
  mutable std::mutex others_mutex_;
  std::vector<others_listener> others_;  ///< `watch_others`
  hot_records hot_;
  lasting_keys lasting_;  ///< catalog rows known committed
  store_set stores_;
  commit_listeners listeners_;
  std::uint64_t followed_ = 0;  ///< the follower's position in the change log
  /// When (steady clock, ms) the last read of the log that reached its head began.
  std::atomic<std::int64_t> caught_up_ms_{0};
  std::chrono::milliseconds max_lag_;
  std::string description_;  ///< the schema, and what opening migrated
  std::string deployment_;   ///< `deployment_id`
  std::mutex own_mutex_;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> own_;  ///< ranges this node logged, not yet followed
  std::mutex stop_mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread follower_;
  std::chrono::milliseconds follow_every_{0};  ///< the service's follower's period (no thread of ours)
  std::atomic<int> careful_{0};  ///< batches left to run with savepoints
};

}  // namespace

}  // namespace cl::storage::pg

namespace cl::storage {

std::shared_ptr<record_store> open_postgresql_store(const postgresql_settings& settings) {
  return std::make_shared<pg::pg_record_store>(settings);
}

std::optional<postgresql_use> postgresql_use_of(const record_store& store) {
  if (const auto* pg = dynamic_cast<const pg::pg_record_store*>(&store)) return pg->use();
  return std::nullopt;
}

}  // namespace cl::storage
