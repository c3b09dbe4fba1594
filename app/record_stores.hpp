#pragma once
/// The record store `serve` and the maintenance commands open: the backend the configuration
/// names (`storage.backend`), LMDB in the data dir by default.

#include "config/settings.hpp"
#include "domain/search_session.hpp"
#include "storage/held_slots.hpp"
#include "storage/leases.hpp"
#include "storage/migrate.hpp"
#include "storage/rate_shares.hpp"
#include "storage/record_store.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cl::app {

/// Opens the configured backend. Throws std::runtime_error saying what is wrong (a data dir or a
/// schema newer than this build, a database that cannot be reached, an unreadable password file);
/// the message never holds the connection string.
std::shared_ptr<storage::record_store> open_record_store(const config::settings& s);

/// The store `s` names, for reading only (`contentlake migrate`'s source): an LMDB data dir opened
/// read-only, nothing in it changed or created (`open_lmdb_store_read_only`; the caller holds its
/// data-dir lock); a PostgreSQL database as `open_record_store` opens it.
std::shared_ptr<storage::record_store> open_record_store_to_read(const config::settings& s);

/// Where `contentlake migrate` into the store `s` names keeps its progress: `<data_dir>/migrate.state`
/// on LMDB, the database itself on PostgreSQL. Call after `open_record_store`.
std::unique_ptr<storage::migration_state> open_migration_state(const config::settings& s);

/// On PostgreSQL, the fingerprint of the secrets every node on the database shares: `mine`
/// (`storage::secrets_fingerprint`) when this node is the first to record one (or the first with
/// `secrets.file` after nodes without), else the one recorded. None on LMDB (one node). Call after
/// `open_record_store` (it migrates the schema).
std::optional<std::string> recorded_secrets_fingerprint(const config::settings& s, const std::string& mine);

/// Where search sessions live: in this process's memory on LMDB (one node), in the database on
/// PostgreSQL (every node shares them; `connections` of its own). Call after `open_record_store`.
std::shared_ptr<domain::session_store> open_session_store(const config::settings& s, const domain::session_limits& limits,
                                                          std::size_t connections);

/// Where the leases of work done once among the nodes are kept: in memory on LMDB (one node holds
/// them all), in the database on PostgreSQL (a connection of its own). Call after `open_record_store`.
std::shared_ptr<storage::lease_store> open_lease_store(const config::settings& s);

/// On PostgreSQL, the held requests of every node (the change feed's limits hold across nodes),
/// this node's kept under `node`; none on LMDB (one node). Call after `open_record_store`.
std::shared_ptr<storage::held_slot_store> open_held_slots(const config::settings& s, const std::string& node);

/// On PostgreSQL, the tally the nodes' rate limiters share (a connection of its own), this node's
/// kept under `node`; none on LMDB (one node). Call after `open_record_store`.
std::shared_ptr<storage::rate_exchange> open_rate_exchange(const config::settings& s, const std::string& node);

}  // namespace cl::app
