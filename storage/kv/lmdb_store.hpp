#pragma once
/// The LMDB backend of the record store: one environment under `<data_dir>/lmdb`, a named
/// database per declared table (storage/kv/kv.hpp), group commits with one fsync.

#include "storage/record_store.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace cl::storage {

/// On-disk format this build writes; a data dir with a newer one is refused, an older one migrated
/// at open. 2: contract versions carry a typed header and the contract-to-Work index is exact.
/// 3: Activities are indexed by the Resource they are about. 4: Resources and Activities carry a
/// typed header beside their JSON (storage/content_stores.hpp). 5: the usage pairs each tenant's
/// contract versions name are recorded (`contract_reads::usages_named`). 6: Resources are indexed
/// by their Work (lists by `work_id`, a contract's fan-out in the change feed). 7: the change log may
/// hold platform policy entries. 8: Activities are indexed by the principals that read them.
inline constexpr int lmdb_format_version = 8;

/// Opens (creating if needed) the LMDB environment in `data_dir`. Throws std::runtime_error with a
/// message that says what to do when the directory cannot be used (newer format, bad permissions).
std::shared_ptr<record_store> open_lmdb_store(const std::string& data_dir, std::size_t map_size_mib);

/// Opens `data_dir`'s environment for reading only, changing nothing on disk (no lock file, no
/// format migration): `contentlake migrate`'s source, whose data-dir lock the caller holds.
/// Throws std::runtime_error when there is none, or its format is not this build's (the message
/// says what to do). Its `apply` throws std::logic_error.
std::shared_ptr<record_store> open_lmdb_store_read_only(const std::string& data_dir);

/// Writes a compacted, consistent copy of `data_dir`'s environment (one read transaction: the
/// state of one commit) to `target_dir`/data.mdb, while a service may be writing to it (LMDB's own
/// copy, `mdb_env_copy2` with MDB_CP_COMPACT). `target_dir` must exist and hold no data.mdb.
void copy_lmdb(const std::string& data_dir, const std::string& target_dir);

}  // namespace cl::storage
