// The PostgreSQL backend as a component (storage/backend.hpp): records, leases, the rate tally,
// held slots, search sessions and the secrets fact in one database that several nodes share;
// writes commit on several lanes; a read is a round trip (its readers are detached); backed up
// with the database's own tools. Its section is `storage.postgresql.*`.

#include "storage/backend.hpp"
#include "storage/postgresql/leases.hpp"
#include "storage/postgresql/postgresql_store.hpp"
#include "storage/postgresql/search_sessions.hpp"

#include <fstream>

namespace cl::storage {

namespace {

bool names_a_database(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0
         || where.find("dbname=") != std::string::npos || where.find("host=") != std::string::npos;
}

std::string read_password(const std::string& file) {
  std::ifstream in{file};
  if (!in) throw std::runtime_error("cannot read storage.postgresql.password_file " + file);
  std::string password;
  std::getline(in, password);
  while (!password.empty() && (password.back() == '\r' || password.back() == ' ')) password.pop_back();
  return password;
}

class postgresql_backend_impl final : public backend {
public:
  postgresql_backend_impl(std::string name, const backend_traits& traits, const config::settings& s)
      : backend(std::move(name), traits, s), section_(s.groups.get<postgresql_section>()) {
    if (section_.url.empty())
      throw std::runtime_error("storage.backend is postgresql but storage.postgresql.url is not set");
    if (section_.writers > 1 && section_.writers >= section_.pool_size)
      throw std::runtime_error("storage.postgresql.writers (" + std::to_string(section_.writers)
                               + ") must be below storage.postgresql.pool_size (" + std::to_string(section_.pool_size)
                               + "): each writer holds a connection while it commits, and reads need one too");
    pg_.url = section_.url;
    if (!section_.password_file.empty()) pg_.password = read_password(section_.password_file);
    pg_.pool_size = section_.pool_size;
    pg_.cache_bytes = section_.cache_mib << 20;
    pg_.wait = std::chrono::milliseconds{s.actors.ask_timeout_ms};
    pg_.answer_wait = std::chrono::milliseconds{section_.answer_wait_ms};
    pg_.follow_interval = std::chrono::milliseconds{section_.follow_interval_ms};
    pg_.max_lag = std::chrono::milliseconds{section_.max_lag_ms};
    pg_.replica_url = section_.replica_url;
    pg_.replica_answer_wait = std::chrono::milliseconds{section_.replica_answer_wait_ms};
    // The service's supervised tickers do the upkeep (actors/ticker.hpp), not threads of the store's.
    pg_.own_threads = false;
  }

  std::shared_ptr<record_store> open_records() override { return open_postgresql_store(pg_); }
  std::shared_ptr<record_store> open_records_to_read() override { return open_postgresql_store(pg_); }
  std::size_t writer_lanes() const override { return section_.writers; }

  std::unique_ptr<storage::migration_state> open_migration_state() override { return postgresql_migration_state(pg_); }

  std::optional<std::string> recorded_secrets_fingerprint(const std::string& mine, bool from_file) override {
    return record_secrets_fingerprint(pg_, mine, from_file);
  }

  std::shared_ptr<domain::session_store> open_session_store(const domain::session_limits& limits,
                                                       std::size_t connections) override {
    return open_postgresql_sessions(pg_, limits, connections);
  }

  std::shared_ptr<storage::lease_store> open_leases() override { return open_postgresql_leases(pg_); }

  std::shared_ptr<held_slot_store> open_held_slots(const std::string& node) override {
    return open_postgresql_held_slots(pg_, node);
  }

  std::shared_ptr<storage::rate_exchange> open_rate_exchange(const std::string& node) override {
    return open_postgresql_rate_exchange(pg_, node);
  }

  std::vector<backend_gauge> status(const record_store& records) const override {
    auto use = postgresql_use_of(records).value_or(postgresql_use{});
    return {{"contentlake_postgresql_connections_in_use",
             "Connections of the record store's pool leased now (at most its size).",
             static_cast<double>(use.connections_in_use), {}, false},
            {"contentlake_postgresql_pool_size", "The record store's pool size.", static_cast<double>(use.pool_size), {},
             false},
            {"contentlake_postgresql_cache_bytes",
             "Bytes of Resources the hot-record cache holds (at most storage.postgresql.cache_mib).",
             static_cast<double>(use.cache_bytes), {}, false},
            {"contentlake_postgresql_reads_total",
             "Committed reads by where they ran, with storage.postgresql.replica_url set: a replica that had replayed "
             "far enough, or the primary (the replica behind, gone, silent, or the node's caches behind the log).",
             static_cast<double>(use.reads_on_replica), {{"target", "replica"}}, true},
            {"contentlake_postgresql_reads_total", "", static_cast<double>(use.reads_on_primary),
             {{"target", "primary"}}, true},
            {"contentlake_postgresql_replica_behind_changes",
             "Change-log entries the last replica found behind had not replayed yet (0: it was current): its "
             "lag as this node's reads see it.",
             static_cast<double>(use.replica_behind), {}, false},
            {"contentlake_postgresql_replica_elsewhere_total",
             "Reads a replica did not serve as its change log's head is on another timeline than the primary's: "
             "it replayed an old primary's commits the new one never got, until it is rewound.",
             static_cast<double>(use.replica_elsewhere), {}, true},
            {"contentlake_postgresql_primary_behind_total",
             "Reads refused (503) as the server reached as the primary was behind what this node had seen committed: "
             "an old primary still reachable after a failover (a multi-host URL's pooled connection), given up.",
             static_cast<double>(use.primary_behind), {}, true}};
  }

  backup_summary backup(const std::string&, const std::vector<std::string>&) override { refuse(); }
  restore_summary restore(const std::string&) override { refuse(); }

  std::string described() const override { return "the PostgreSQL database"; }

private:
  [[noreturn]] static void refuse() {
    throw backup_refused("the records are in PostgreSQL (storage.backend=postgresql): back them up with pg_dump and "
                         "restore them with pg_restore, then run `contentlake reindex` (docs/operations.md, \"Backup "
                         "and restore on PostgreSQL\")");
  }

  postgresql_section section_;
  postgresql_settings pg_;
};

using section = postgresql_section;

}  // namespace

backend_entry postgresql_backend() {
  backend_entry e;
  e.name = "postgresql";
  e.summary = "storage.postgresql.url; several nodes may share it";
  e.traits.shared = true;
  e.traits.reads_block = true;
  e.traits.in_data_dir = false;
  e.traits.trusts_inserts = true;
  e.options = {
    {"storage.postgresql.url", "",
     "With storage.backend=postgresql: a libpq connection string or URI (host, port, dbname, user); a password in it "
     "is never logged, but prefer storage.postgresql.password_file or PGPASSWORD.",
     config::text_member(&section::url)},
    {"storage.postgresql.password_file", "", "A file holding the PostgreSQL password (its first line), read at start.",
     config::text_member(&section::password_file)},
    {"storage.postgresql.pool_size", "8", "Connections to PostgreSQL this node opens at most.",
     config::integer_member(&section::pool_size, 1, 1000)},
    {"storage.postgresql.cache_mib", "64",
     "Memory for hot Resources read without a round trip to PostgreSQL; dropped when written here, or within 100 ms "
     "when the change log shows another node wrote them. 0: every read goes to the database.",
     config::integer_member(&section::cache_mib, 0, 65536)},
    {"storage.postgresql.writers", "2",
     "Writes committing at once on PostgreSQL, each its own group commit (LMDB has one writer). One actor's writes "
     "stay in order. Also the idempotency ledger's lookups at once. Must be below storage.postgresql.pool_size.",
     config::integer_member(&section::writers, 1, 64)},
    {"storage.postgresql.answer_wait_ms", "15000",
     "How long a statement waits for PostgreSQL's answer before its connection is given up and the request "
     "answers 503: a database that stopped answering (hung, its host unreachable) holds no thread longer. Keep it "
     "above the sessions' lock_timeout (10 s).",
     config::integer_member(&section::answer_wait_ms, 100, 3600000)},
    {"storage.postgresql.follow_interval_ms", "100",
     "How often this node reads the change log for what other nodes wrote (their writes reach its caches, "
     "long polls, streams and webhooks within about this). Keep it below storage.postgresql.max_lag_ms: at or above "
     "it, most reads pass the caches by.",
     config::integer_member(&section::follow_interval_ms, 10, 60000)},
    {"storage.postgresql.max_lag_ms", "250",
     "The most another node's change may be missing from this node's caches: while this node has not read "
     "the change log to its head for longer (a stalled follower, a slow database), access roles, resolved rights "
     "and hot records are read from the database instead of its caches. contentlake_change_log_lag_seconds shows "
     "the lag.",
     config::integer_member(&section::max_lag_ms, 20, 60000)},
    {"storage.postgresql.replica_url", "",
     "Replicas for reads of Resources, grants and contracts (HAProxy's replica port, or a replica's address): a read "
     "runs on one that has replayed the change log as far as the read must reflect (the request's Content-Lake-Position, this node's own "
     "last commit and last read of the log), else on the primary. Empty: every read on the primary. The password is "
     "storage.postgresql.password_file's.",
     config::text_member(&section::replica_url)},
    {"storage.postgresql.replica_answer_wait_ms", "1000",
     "How long a read waits for a replica's answer before the primary answers it instead; the replica is then left "
     "alone for a second.",
     config::integer_member(&section::replica_answer_wait_ms, 50, 600000)}};
  e.make = &make_backend<postgresql_backend_impl>;
  e.claims = &names_a_database;
  e.at = [](config::settings base, const std::string& where) {
    base.storage.backend = "postgresql";
    base.groups.get<postgresql_section>().url = where;
    return base;
  };
  return e;
}

}  // namespace cl::storage
