#pragma once
/// The access actor (layer 2 of spec 5.3): answers a caller's effective role on a Resource from
/// the grants in LMDB and the group directory (config `access.directory_file`, re-read on change;
/// tokens never carry groups). Every positive answer also goes into the shared access cache for
/// the current access epoch, which grant writes and directory changes bump. Grants are written
/// by the writer like every other mutation (plans in actors/access_plans.cpp).

#include "actors/interfaces.hpp"
#include "actors/shared_cache.hpp"
#include "domain/access.hpp"
#include "config/watched_config.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace cl::actors {

using access_cache = shared_cache<domain::access_role>;

struct access_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<access_cache> cache;                ///< may be null
  std::shared_ptr<std::atomic<std::uint64_t>> epoch;  ///< bumped on a directory change
  std::shared_ptr<std::atomic<std::uint64_t>> outside_changes;  ///< bumped on a directory change (edge purge)
  std::string directory_file;                         ///< watched; empty or missing: no groups
};

/// The group directory file as watched by the access actor: missing means no groups.
config::watched_config<domain::group_directory> watched_directory(const std::string& path);

/// Key of a role in the access cache.
inline std::string access_cache_key(const std::string& tenant, const std::string& resource, const std::string& subject,
                                    std::uint64_t epoch) {
  return tenant + '\0' + resource + '\0' + subject + '\0' + std::to_string(epoch);
}

/// `subject`'s role on `resource` through its own grants and those of its groups in `dir`.
domain::access_role role_of(const storage::record_store& store, const domain::group_directory& dir,
                            const std::string& tenant, const std::string& subject, const std::string& resource);

struct access_state {
  static constexpr const char* name = "access";
  std::optional<config::watched_config<domain::group_directory>> directory;
};

access_actor::behavior_type access(access_actor::stateful_pointer<access_state> self,
                                   std::shared_ptr<const access_config> cfg);

}  // namespace cl::actors
