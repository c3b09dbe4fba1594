#pragma once
/// The PostgreSQL backend's side of the seam (storage-private): what a typed store's SQL
/// implementation works on, and how it registers. Each store's file (storage/postgresql/*_store.cpp)
/// implements the store's interface in SQL on the tables the schema's migrations create
/// (storage/postgresql/schema.cpp) and registers with `pg::implement`, as the key-value stores do
/// with `kv::implement`.

#include "storage/postgresql/connection.hpp"
#include "storage/record_store.hpp"
#include "storage/store_registry.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cl::storage::pg {

class hot_records;

/// Where a store's statements run: the writer's transaction (`writable`), or a pooled connection
/// per statement (committed state); the view it belongs to, to use other stores through. `hot`:
/// the hot-record cache reads are served from (committed state only). `touched`: in a transaction,
/// where a store notes the cached keys it wrote, dropped from the cache once the batch ends.
struct context {
  static constexpr const char* backend = "PostgreSQL";
  const session& db;
  bool writable;
  const read_view& view;
  hot_records* hot = nullptr;
  std::vector<std::string>* touched = nullptr;
};

/// Registers `Impl` as the PostgreSQL implementation of the store `Writes`. Returns true.
template <class Writes, class Impl>
bool implement() {
  return implement_store<Writes, Impl, context>();
}

/// A number as a statement parameter.
inline std::string num(std::int64_t n) { return std::to_string(n); }
inline std::string num(std::uint64_t n) { return std::to_string(n); }

/// Declares a part of the schema (at static initialisation, from the file of the stores that use
/// it): its numbered migrations, the first creating its tables. The core's part is "core"; a route
/// group that adds a store adds its tables as a part of its own. Returns true.
bool schema_part(std::string name, std::vector<std::string> migrations);

/// Each part's name and the version this build creates and reads.
std::vector<std::pair<std::string, int>> schema_versions();

/// Applies the migrations `db` has not had, every part's, in one transaction under a lock every
/// node takes (several nodes starting at once apply each once). Throws std::runtime_error when a
/// part's schema is newer than this build's.
void migrate(const connection& db);

}  // namespace cl::storage::pg
