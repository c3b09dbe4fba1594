#include "actors/access.hpp"
#include "actors/fault_hooks.hpp"
#include "actors/backend_error.hpp"
#include "actors/recheck.hpp"
#include "domain/clock.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace cl::actors {

namespace {

constexpr std::int64_t cache_seconds = 60;


std::vector<std::string> principals_of(const domain::group_directory& dir, const std::string& tenant,
                                       const std::string& subject) {
  auto all = dir.groups_of(tenant, subject);
  all.insert(all.begin(), subject);
  return all;
}

}  // namespace

config::watched_config<domain::group_directory> watched_directory(const std::string& path) {
  using watch = config::watched_config<domain::group_directory>;
  return watch{"access: directory file", path, [](const std::string& text) { return domain::parse_directory(text); },
               domain::group_directory{}, watch::on_missing::fall_back,
               [](const domain::group_directory& d) { return d.version.empty() ? std::string{"no groups"} : "group directory " + d.version; }};
}

domain::access_role role_of(const storage::record_store& store, const domain::group_directory& dir,
                            const std::string& tenant, const std::string& subject, const std::string& resource) {
  // One point read per principal (the subject, then each of its groups); the rule is the domain's.
  auto groups = dir.groups_of(tenant, subject);
  std::vector<std::pair<std::string, domain::access_role>> grants;
  auto read = [&](const std::string& p) {
    if (auto role = store.grants().role(tenant, p, resource)) grants.emplace_back(p, *role);
  };
  read(subject);
  for (const auto& g : groups) read(g);
  return domain::effective_role(grants, subject, groups);
}

access_actor::behavior_type access(access_actor::stateful_pointer<access_state> self,
                                   std::shared_ptr<const access_config> cfg) {
  accept_fault_delays(self);
  auto& st = self->state;
  // The service checked the file at start; a restarted actor whose file has turned invalid since
  // runs without groups (and logs it) rather than not starting.
  st.directory.emplace(watched_directory(cfg->directory_file));
  st.directory->start();
  if (cfg->epoch) ++*cfg->epoch;  // a restarted actor may have missed a directory change
  if (cfg->outside_changes) ++*cfg->outside_changes;
  if (st.directory->watching()) schedule_recheck(self);
  return {
    [self, cfg](check_atom, const std::string& tenant, const std::string& subject,
                const std::string& resource) -> caf::result<std::int32_t> {
      try {
        // The epoch is read before the grants: a grant written meanwhile bumps it after its
        // commit, so this answer can never be found under the new epoch.
        auto epoch = cfg->epoch ? cfg->epoch->load() : 0;
        auto role = role_of(*cfg->store, self->state.directory->current(), tenant, subject, resource);
        // Only roles are kept: a denial is rare and must not outlive a grant made a moment later.
        if (cfg->cache && role != domain::access_role::none) {
          auto now = domain::now_seconds();
          cfg->cache->insert(access_cache_key(tenant, resource, subject, epoch), role, now + cache_seconds, now);
        }
        return static_cast<std::int32_t>(role);
      } catch (const std::exception& e) {
        return storage_error("access", e);
      }
    },
    [self](principals_atom, const std::string& tenant, const std::string& subject) -> std::vector<std::string> {
      return principals_of(self->state.directory->current(), tenant, subject);
    },
    [self](group_atom, const std::string& tenant, const std::string& group) -> bool {
      return self->state.directory->current().has_group(tenant, group);
    },
    [self, cfg](recheck_atom) {
      recheck(self, "access", [&] {
        // Cached roles may have come through groups that changed.
        if (!self->state.directory->recheck()) return;
        if (cfg->epoch) ++*cfg->epoch;
        if (cfg->outside_changes) ++*cfg->outside_changes;
      });
    },
  };
}

}  // namespace cl::actors
