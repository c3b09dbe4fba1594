// The record store on PostgreSQL: typed stores over committed state (a pooled connection per
// statement), the group commit (one transaction, a savepoint per mutation) and the change log.
//
// The change log is numbered without gaps by a single-writer allocation: a batch's entries are
// kept in memory while its mutations run, and only at the end does the transaction take the log
// head's row lock (`UPDATE change_head SET seq = seq + n RETURNING seq`), write its entries with
// the numbers that follow and commit. The lock is held from that update to the commit, so
// transactions that log commit in the order of their numbers: a reader that sees entry n has seen
// every entry before it, on any node (docs/architecture.md, "The change log on PostgreSQL").

#include "storage/postgresql/postgresql_store.hpp"

#include "storage/commit_listeners.hpp"
#include "storage/postgresql/backend.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

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
  mutable std::uint64_t count = 0;

private:
  const connection& c_;
};

const statement head_locked{"SELECT seq FROM change_head FOR UPDATE"};
const statement head_advance{"UPDATE change_head SET seq = seq + $1 RETURNING seq"};
const statement head_read{"SELECT seq FROM change_head"};
const statement log_insert{
  "INSERT INTO change_log (seq, transaction, tenant, kind, id, op, at_ms, version, hash, principal) "
  "SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::smallint[], $5::text[], $6::smallint[], "
  "$7::bigint[], $8::text[], $9::text[], $10::text[])"};
const statement log_read{
  "SELECT seq, transaction, tenant, kind, id, op, at_ms, version, hash, principal FROM change_log "
  "WHERE seq > $1 ORDER BY seq LIMIT $2"};
const statement consumer_put{
  "INSERT INTO change_consumers (name, applied) VALUES ($1, $2) "
  "ON CONFLICT (name) DO UPDATE SET applied = EXCLUDED.applied"};
const statement consumer_erase{"DELETE FROM change_consumers WHERE name = $1"};
const statement consumer_list{"SELECT name, applied FROM change_consumers ORDER BY name"};
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
  store_set(const session& db, bool writable, const read_view& view) : db_(db), writable_(writable), view_(view) {}
  typed_store& at(store_kind kind) const {
    std::lock_guard<std::mutex> guard{mutex_};
    if (stores_.size() <= kind.slot) stores_.resize(kind.slot + 1);
    auto& s = stores_[kind.slot];
    if (!s) s = make_store(kind.slot, context{db_, writable_, view_});
    return *s;
  }

private:
  const session& db_;
  bool writable_;
  const read_view& view_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<typed_store>> stores_;
};

/// The entries a batch logged, kept until the commit numbers them.
struct batch_log {
  std::vector<change_entry> entries;
  std::vector<std::size_t> first_of_mutation;  ///< per entry: the index of its mutation's first entry
  std::optional<std::uint64_t> locked_head;     ///< the head read under its lock, once taken
};

/// What one mutation sees: the stores over the transaction, and the batch's log.
class pg_write_view final : public write_txn {
public:
  pg_write_view(const connection& c, batch_log& log)
    : db_(c), c_(c), log_(log), first_(log.entries.size()), stores_(db_, true, *this) {}

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
    db_.run(consumer_put, {name, num(applied)});
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

/// Writes the batch's entries with the numbers after the head (taking its lock), in one statement.
std::uint64_t write_log(const connection& c, batch_log& log) {
  auto n = static_cast<std::uint64_t>(log.entries.size());
  auto last = static_cast<std::uint64_t>(c.run(head_advance, {num(n)}).integer(0, 0));
  auto first = last - n + 1;
  std::vector<std::string> cols[10];
  for (std::size_t i = 0; i < log.entries.size(); ++i) {
    const auto& e = log.entries[i];
    cols[0].push_back(std::to_string(first + i));
    cols[1].push_back(std::to_string(first + log.first_of_mutation[i]));
    cols[2].push_back(e.tenant);
    cols[3].push_back(std::to_string(static_cast<int>(e.kind)));
    cols[4].push_back(e.id);
    cols[5].push_back(std::to_string(static_cast<int>(e.op)));
    cols[6].push_back(std::to_string(e.at_ms));
    cols[7].push_back(e.version);
    cols[8].push_back(e.hash);
    cols[9].push_back(e.principal);
  }
  std::string a[10];
  for (int i = 0; i < 10; ++i) a[i] = array_literal(cols[i]);
  c.run(log_insert, {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]});
  return last;
}

class pg_record_store final : public record_store {
public:
  explicit pg_record_store(const postgresql_settings& s)
    : pool_(s.url, s.password, s.pool_size, s.wait), reads_(pool_), stores_(reads_, false, *this) {
    auto c = pool_.acquire();
    migrate(*c);
  }

  std::vector<bool> apply(const std::vector<mutation>& batch) override {
    std::vector<bool> kept(batch.size(), false);
    auto c = begin();
    std::uint64_t last = 0;
    try {
      batch_log log;
      for (std::size_t i = 0; i < batch.size(); ++i) kept[i] = run_one(*c, batch[i], log);
      if (!log.entries.empty()) last = write_log(*c, log);
      c->exec("COMMIT");
    } catch (...) {
      if (c->healthy()) {
        try {
          c->exec("ROLLBACK");
        } catch (...) {
        }
      }
      throw;
    }
    if (last != 0) listeners_.notify(last);
    return kept;
  }

  std::uint64_t last_change() const override {
    return static_cast<std::uint64_t>(reads_.run(head_read).integer(0, 0));
  }

  bool probe() const override {
    try {
      reads_.run(head_read);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  std::vector<change_entry> read_from(std::uint64_t after, std::size_t limit) const override {
    return decode_entries(reads_.run(log_read, {num(after), num(static_cast<std::uint64_t>(limit))}));
  }

  std::uint64_t subscribe(commit_listener listener) override { return listeners_.add(std::move(listener)); }
  void unsubscribe(std::uint64_t handle) override { listeners_.remove(handle); }

  std::vector<std::pair<std::string, std::uint64_t>> consumers() const override {
    auto r = reads_.run(consumer_list);
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.emplace_back(r.str(i, 0), static_cast<std::uint64_t>(r.integer(i, 1)));
    return out;
  }

protected:
  const typed_store& find_store(store_kind kind) const override { return stores_.at(kind); }

private:
  /// A connection in a new transaction. When the one the pool gave has broken (the server restarted
  /// since it was last used), the idle ones are dropped and BEGIN is sent once more on a new one:
  /// nothing of the batch was sent yet.
  pool::lease begin() {
    try {
      auto c = pool_.acquire();
      c->exec("BEGIN");
      return c;
    } catch (const unavailable&) {
      pool_.drop_idle();
      auto c = pool_.acquire();
      c->exec("BEGIN");
      return c;
    }
  }

  /// Runs one mutation under its own savepoint: refused or failed, it loses only its own changes.
  /// One that lost to another transaction (a unique key taken, a compare-and-set that found another
  /// version) runs again, now seeing what won.
  bool run_one(const connection& c, const mutation& m, batch_log& log) {
    for (int attempt = 0;; ++attempt) {
      c.exec("SAVEPOINT m");
      auto entries_before = log.entries.size();
      bool had_head = log.locked_head.has_value();  // a lock taken under the savepoint goes with it
      auto undo = [&] {
        c.exec("ROLLBACK TO SAVEPOINT m");
        log.entries.resize(entries_before);
        log.first_of_mutation.resize(entries_before);
        if (!had_head) log.locked_head.reset();
      };
      bool keep = false;
      try {
        pg_write_view view{c, log};
        keep = m(view);
      } catch (const conflict&) {
        if (attempt < 3) {
          undo();
          continue;
        }
        keep = false;
      } catch (const store_full&) {
        throw;  // no room: the whole group fails
      } catch (const unavailable&) {
        throw;  // the connection is gone: so is the transaction
      } catch (const std::exception&) {
        keep = false;
      }
      if (keep) {
        c.exec("RELEASE SAVEPOINT m");
        return true;
      }
      undo();
      return false;
    }
  }

  pool pool_;
  pooled_session reads_;
  store_set stores_;
  commit_listeners listeners_;
};

}  // namespace

}  // namespace cl::storage::pg

namespace cl::storage {

std::shared_ptr<record_store> open_postgresql_store(const postgresql_settings& settings) {
  return std::make_shared<pg::pg_record_store>(settings);
}

}  // namespace cl::storage
