#pragma once
/// The system of record behind the resource actors. LMDB implements it on one node; a shared
/// backend (PostgreSQL) is an added implementation of the same interface.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cl::storage {

/// Read access to stored records. Implementations are safe to call from any thread.
class record_store {
public:
  virtual ~record_store() = default;

  /// The canonical JSON bytes of a Resource of `tenant`, or nullopt when there is none.
  virtual std::optional<std::string> get_resource(std::string_view tenant, std::string_view id) const = 0;

  /// Writes a Resource's canonical JSON (used by later write paths and tests).
  virtual void put_resource(std::string_view tenant, std::string_view id, std::string_view json) = 0;
};

/// On-disk format this build writes; a data dir with a newer one is refused.
inline constexpr int lmdb_format_version = 1;

/// Opens (creating if needed) the LMDB environment in `data_dir`. Throws std::runtime_error with a
/// message that says what to do when the directory cannot be used (newer format, bad permissions).
std::shared_ptr<record_store> open_lmdb_store(const std::string& data_dir, std::size_t map_size_mib);

}  // namespace cl::storage
