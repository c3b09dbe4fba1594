#pragma once
/// The PostgreSQL backend of the record store (`storage.backend = postgresql`): every typed store
/// in SQL tables, one database transaction per group commit with a savepoint per mutation, and a
/// change log numbered without gaps across every node writing to the same database
/// (docs/architecture.md, "The PostgreSQL backend").

#include "storage/migrate.hpp"
#include "storage/record_store.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <string>

namespace cl::storage {

/// The backend's configuration section (`storage.postgresql.*`, in `settings::groups`; the
/// options in storage/postgresql/postgresql_backend.cpp).
struct postgresql_section {
  std::string url;            ///< a libpq connection string (may hold a password: never logged)
  std::string password_file;  ///< the password, read from this file (else the URL's or PGPASSWORD)
  std::size_t pool_size = 8;
  std::size_t cache_mib = 64;  ///< the hot-record cache (0: none)
  std::size_t writers = 2;     ///< writer lanes: transactions committing at once
  int answer_wait_ms = 15000;  ///< a statement's wait for the server's answer
  int follow_interval_ms = 100;  ///< how often the change log is read for other nodes' writes
  /// How far behind the change log this node's caches may be before it stops trusting them.
  int max_lag_ms = 250;
  std::string replica_url;  ///< where reads a replica may serve go (empty: all to the primary)
  int replica_answer_wait_ms = 1000;  ///< a replica silent this long: the read goes to the primary
};

struct postgresql_settings {
  std::string url;             ///< a libpq connection string or URI (may hold a password: never logged)
  std::string password;        ///< overrides the URL's when not empty
  std::size_t pool_size = 8;   ///< connections this node opens at most
  std::chrono::milliseconds wait{2000};  ///< how long a statement waits for a free connection
  std::size_t cache_bytes = 64u << 20;   ///< the hot-record cache's bound (0: no cache)
  /// How often the change log is read for what other nodes changed (the cache's bound on staleness
  /// for their writes; this node's own writes leave the cache before they are answered).
  std::chrono::milliseconds follow_interval{100};
  /// True: the upkeep (following the log, keeping held slots alive) runs on threads of the store's
  /// own (tools, tests). False: the service's supervised tickers call it (`record_store::follow`
  /// every `follow_interval`, `held_slot_store::keep`; actors/ticker.hpp).
  bool own_threads = true;
  /// The most this node's caches may lag the log: past it (`record_store::log_lag`) the hot-record
  /// cache answers nothing, and the node's other caches are passed by (actors/directory.hpp).
  std::chrono::milliseconds max_lag{250};
  /// Uses of a prepared statement on one connection before it is prepared and planned again
  /// (connection.hpp says why).
  std::size_t replan_after = 1000;
  /// How long a statement waits for the database's answer before its connection is given up (a
  /// server that stopped answering holds no thread longer). Above the sessions' lock_timeout (10 s).
  std::chrono::milliseconds answer_wait{15000};
  /// Replicas for committed reads (storage/postgresql/replicas.hpp); empty: none.
  std::string replica_url{};
  /// How long a read waits for a replica's answer before the primary answers it instead.
  std::chrono::milliseconds replica_answer_wait{1000};
};

/// Connects, applies the schema's migrations and answers the record store. Throws
/// std::runtime_error saying what is wrong (cannot connect, a schema newer than this build).
std::shared_ptr<record_store> open_postgresql_store(const postgresql_settings& settings);

/// What a PostgreSQL store holds now (its gauges).
struct postgresql_use {
  std::size_t connections_in_use = 0;  ///< of the pool, leased now
  std::size_t pool_size = 0;
  std::size_t cache_bytes = 0;  ///< held by the hot-record cache (bound: `cache_bytes` of the settings)
  std::uint64_t reads_on_replica = 0;  ///< committed reads a replica answered (replica_url set)
  std::uint64_t reads_on_primary = 0;  ///< ... and the primary answered instead
  std::uint64_t replica_behind = 0;    ///< change-log entries the last replica found behind lacked
  std::uint64_t replica_elsewhere = 0;  ///< reads a replica on another timeline's history did not serve
  std::uint64_t primary_behind = 0;  ///< reads refused as the server reached as primary was behind (no longer it)
};

/// `store`'s use, when it is a PostgreSQL store.
std::optional<postgresql_use> postgresql_use_of(const record_store& store);

/// Records `fingerprint` (`secrets_fingerprint`) as the secrets of every node on the database when
/// none is recorded yet, or when the one recorded came from a node's own secrets and this one from a
/// secrets file (`from_file`: the move to several nodes); answers the one recorded. The schema must
/// be migrated (a store opened). Throws std::runtime_error when the database cannot be reached.
std::string record_secrets_fingerprint(const postgresql_settings& settings, const std::string& fingerprint,
                                       bool from_file);

/// Where `contentlake migrate` keeps its progress into this database: in it (`cluster_facts`, a row
/// per kind), so a resumed migration finds it wherever it runs from. The schema must be migrated
/// (a store opened). Throws std::runtime_error when the database cannot be reached.
std::unique_ptr<migration_state> postgresql_migration_state(const postgresql_settings& settings);

}  // namespace cl::storage
