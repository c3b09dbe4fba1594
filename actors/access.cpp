#include "actors/access.hpp"
#include "actors/backend_error.hpp"
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

void reload_if_changed(access_state& st, const access_config& cfg) {
  auto change = st.directory_file.poll();
  if (!change.changed) return;
  if (!change.text) {
    // A removed file means no groups: access through groups ends with it.
    spdlog::warn("access: directory file {} is gone; no groups until it is back", cfg.directory_file);
    st.directory = {};
  } else {
    auto parsed = domain::parse_directory(*change.text);
    if (auto* error = std::get_if<std::string>(&parsed)) {
      spdlog::error("access: directory file {} rejected ({}); keeping directory {}", cfg.directory_file, *error,
                    st.directory.version);
      return;
    }
    st.directory = std::get<domain::group_directory>(std::move(parsed));
    spdlog::info("access: group directory {} in effect", st.directory.version);
  }
  if (cfg.epoch) ++*cfg.epoch;  // cached roles may have come through groups that changed
}

}  // namespace

std::variant<domain::group_directory, std::string> starting_directory(const access_config& cfg,
                                                                      const std::optional<std::string>& file_text) {
  if (cfg.directory_file.empty() || !file_text) return domain::group_directory{};
  auto parsed = domain::parse_directory(*file_text);
  if (auto* error = std::get_if<std::string>(&parsed)) return cfg.directory_file + ": " + *error;
  return parsed;
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
  auto& st = self->state;
  st.directory_file = config::watched_file{cfg->directory_file};
  // The service checked the file at start; a restarted actor whose file has turned invalid since
  // runs without groups (and logs it) rather than not starting.
  auto start = starting_directory(*cfg, st.directory_file.poll().text);
  if (auto* error = std::get_if<std::string>(&start)) {
    spdlog::error("access: {}; no groups until it is fixed", *error);
  } else {
    st.directory = std::get<domain::group_directory>(std::move(start));
  }
  if (cfg->epoch) ++*cfg->epoch;  // a restarted actor may have missed a directory change
  if (!cfg->directory_file.empty()) self->delayed_send(self, std::chrono::seconds{1}, recheck_atom_v);
  return {
    [self, cfg](check_atom, const std::string& tenant, const std::string& subject,
                const std::string& resource) -> caf::result<std::int32_t> {
      try {
        // The epoch is read before the grants: a grant written meanwhile bumps it after its
        // commit, so this answer can never be found under the new epoch.
        auto epoch = cfg->epoch ? cfg->epoch->load() : 0;
        auto role = role_of(*cfg->store, self->state.directory, tenant, subject, resource);
        // Only roles are kept: a denial is rare and must not outlive a grant made a moment later.
        if (cfg->cache && role != domain::access_role::none) {
          auto now = domain::now_seconds();
          cfg->cache->insert(access_cache_key(tenant, resource, subject, epoch), role, now + cache_seconds, now);
        }
        return static_cast<std::int32_t>(role);
      } catch (const std::exception& e) {
        spdlog::error("access: check failed: {}", e.what());
        return caf::make_error(backend_error::storage_failure, "access check failed");
      }
    },
    [self](principals_atom, const std::string& tenant, const std::string& subject) -> std::vector<std::string> {
      return principals_of(self->state.directory, tenant, subject);
    },
    [self](group_atom, const std::string& tenant, const std::string& group) -> bool {
      return self->state.directory.has_group(tenant, group);
    },
    [self, cfg](recheck_atom) {
      try {
        reload_if_changed(self->state, *cfg);
      } catch (const std::exception& e) {
        spdlog::error("access: directory recheck failed: {}", e.what());
      }
      self->delayed_send(self, std::chrono::seconds{1}, recheck_atom_v);
    },
  };
}

}  // namespace cl::actors
