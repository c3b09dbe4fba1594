#pragma once
/// Backup and restore of a data dir (issue 31, item 8), for `contentlake backup` and `restore`.
///
/// A backup is taken while the service runs: the record store (every table, the idempotency ledger,
/// the change log, webhook and purge positions) as LMDB's compacted copy of one commit, then the
/// embedded object store's objects (each checked against its SHA-256), then the identity files
/// (keys and secrets). Objects are copied after the records, so every object a copied record names
/// was there to copy (objects are never deleted while a record names them). The search index is not
/// copied: restore rebuilds it from the copied records. `backup.json` describes the copy and names
/// the configuration files the service reads (copied under `config/` when they exist).

#include "storage/backend.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cl::storage {

/// Copies `data_dir` into `to`, which must not exist or be empty (created mode 0700: it holds
/// keys). `configuration`: the configuration files the service reads, named in the manifest and
/// copied when they exist. Throws std::runtime_error saying what failed.
backup_summary backup_data_dir(const std::string& data_dir, const std::string& to,
                               const std::vector<std::string>& configuration);

/// Restores the backup at `from` into `data_dir`, which must hold no record store (a new or empty
/// directory; never the live one): records, objects, identity, then a new change-log epoch (feed
/// cursors issued after the backup point answer 410, event ids change) and a rebuilt search index.
restore_summary restore_data_dir(const std::string& from, const std::string& data_dir, std::size_t map_size_mib);

}  // namespace cl::storage
