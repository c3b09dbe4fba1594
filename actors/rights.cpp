#include "actors/rights.hpp"
#include "actors/backend_error.hpp"
#include "domain/clock.hpp"

#include "actors/contracts.hpp"
#include "actors/directory.hpp"
#include "domain/records.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace cl::actors {

namespace {


domain::resolved_rights resolve(const rights_state& st, const rights_config& cfg, const std::string& tenant,
                                const std::string& work, std::int64_t now) {
  // The epoch is read before the contracts: a contract written meanwhile bumps it after its
  // commit, so this resolution can never be found under the new epoch.
  auto epoch = cfg.epoch ? cfg.epoch->load() : 0;
  auto r = resolve_work(work, work.empty() ? std::vector<std::string>{} : cfg.store->contracts().for_work(tenant, work),
                        st.policy, now);
  if (cfg.cache)
    cfg.cache->insert(rights_cache_key(tenant, work, epoch), std::make_shared<const domain::resolved_rights>(r),
                      std::min(r.valid_until, now + 1), now);
  return r;
}

void reload_policy_if_changed(rights_state& st, const rights_config& cfg) {
  auto change = st.policy_file.poll();
  if (!change.changed) return;
  if (!change.text) {
    spdlog::error("rights: cannot read policy file {}; keeping policy {}", cfg.policy_file, st.policy.version);
    return;
  }
  auto parsed = domain::parse_policy(*change.text);
  if (auto* error = std::get_if<std::string>(&parsed)) {
    spdlog::error("rights: policy file {} rejected ({}); keeping policy {}", cfg.policy_file, *error, st.policy.version);
    return;
  }
  auto& next = std::get<domain::platform_policy>(parsed);
  if (next.version != st.policy.version) spdlog::info("rights: platform policy {} in effect", next.version);
  st.policy = std::move(next);
  if (cfg.current) cfg.current->set(st.policy);
  if (cfg.epoch) ++*cfg.epoch;  // every cached resolution used the old policy
}

}  // namespace

domain::resolved_rights resolve_work(const std::string& work, const std::vector<std::string>& contract_records,
                                     const domain::platform_policy& policy, std::int64_t now) {
  if (work.empty()) return domain::no_contract_rights(domain::format_utc(now));
  std::vector<domain::contract_view> views;
  for (const auto& record : contract_records)
    if (auto v = domain::contract_view_of(record)) views.push_back(std::move(*v));
  return domain::resolve_rights(views, policy, now);
}

std::variant<policy_source, std::string> starting_policy(const rights_config& cfg,
                                                         const std::optional<std::string>& file_text) {
  if (cfg.policy_file.empty() || !file_text) return policy_source{cfg.builtin_policy, "built-in"};
  auto parsed = domain::parse_policy(*file_text);
  if (auto* error = std::get_if<std::string>(&parsed)) return cfg.policy_file + ": " + *error;
  return policy_source{std::get<domain::platform_policy>(std::move(parsed)), cfg.policy_file};
}

rights_actor::behavior_type rights(rights_actor::stateful_pointer<rights_state> self,
                                   std::shared_ptr<const rights_config> cfg) {
  auto& st = self->state;
  st.policy_file = config::watched_file{cfg->policy_file};
  // The service checked the file at start; a restarted resolver whose file has turned invalid
  // since falls back to the built-in policy (and logs it) rather than not starting.
  auto start = starting_policy(*cfg, st.policy_file.poll().text);
  if (auto* error = std::get_if<std::string>(&start)) {
    spdlog::error("rights: {}; using the built-in policy {}", *error, cfg->builtin_policy.version);
    st.policy = cfg->builtin_policy;
  } else {
    st.policy = std::get<policy_source>(start).policy;
  }
  if (cfg->current) cfg->current->set(st.policy);
  if (cfg->epoch) ++*cfg->epoch;  // a restarted resolver may have missed a policy change
  if (!cfg->policy_file.empty()) self->delayed_send(self, std::chrono::seconds{1}, recheck_atom_v);
  return {
    [self, cfg](resolve_atom, const std::string& tenant, const std::string& work) -> caf::result<domain::resolved_rights> {
      try {
        return resolve(self->state, *cfg, tenant, work, domain::now_seconds());
      } catch (const std::exception& e) {
        spdlog::error("rights: resolution failed: {}", e.what());
        return caf::make_error(backend_error::storage_failure, "rights resolution failed");
      }
    },
    [self, cfg](resolve_atom, const std::string& tenant,
                const std::vector<std::string>& works) -> caf::result<std::vector<domain::resolved_rights>> {
      try {
        auto now = domain::now_seconds();
        std::vector<domain::resolved_rights> out;
        out.reserve(works.size());
        for (const auto& w : works) out.push_back(resolve(self->state, *cfg, tenant, w, now));
        return out;
      } catch (const std::exception& e) {
        spdlog::error("rights: resolution failed: {}", e.what());
        return caf::make_error(backend_error::storage_failure, "rights resolution failed");
      }
    },
    [self, cfg](recheck_atom) {
      try {
        reload_policy_if_changed(self->state, *cfg);
      } catch (const std::exception& e) {
        spdlog::error("rights: policy recheck failed: {}", e.what());
      }
      self->delayed_send(self, std::chrono::seconds{1}, recheck_atom_v);
    },
  };
}

}  // namespace cl::actors
