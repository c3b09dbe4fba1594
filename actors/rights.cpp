#include "actors/rights.hpp"
#include "actors/fault_hooks.hpp"
#include "actors/backend_error.hpp"
#include "actors/recheck.hpp"
#include "domain/clock.hpp"

#include "actors/contracts.hpp"
#include "actors/directory.hpp"
#include "domain/records.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace cl::actors {

namespace {

/// How long a `possible` answer is kept at most, should a change of the tenant's contracts on
/// another node reach this one late: the epoch that change bumps is what invalidates it.
constexpr std::int64_t possible_cache_seconds = 60;

domain::resolved_rights resolve(const rights_state& st, const rights_config& cfg, const std::string& tenant,
                                const std::string& work, std::int64_t now) {
  // The epoch is read before the contracts: a contract written meanwhile bumps it after its
  // commit, so this resolution can never be found under the new epoch.
  auto epoch = cfg.epoch ? cfg.epoch->load() : 0;
  auto r = resolve_work(work, work.empty() ? std::vector<std::string>{} : cfg.store->contracts().for_work(tenant, work),
                        st.policy->current(), now);
  if (cfg.cache)
    cfg.cache->insert(rights_cache_key(tenant, work, epoch), std::make_shared<const domain::resolved_rights>(r),
                      std::min(r.valid_until, now + 1), now);
  return r;
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

config::watched_config<domain::platform_policy> watched_policy(const rights_config& cfg) {
  using watch = config::watched_config<domain::platform_policy>;
  return watch{"rights: policy file", cfg.policy_file, [](const std::string& text) { return domain::parse_policy(text); },
               cfg.builtin_policy, watch::on_missing::keep,
               [](const domain::platform_policy& p) { return "platform policy " + p.version; }};
}

namespace {

/// Logs the policy now in force (`version`) in the change log, once for every tenant: readers of
/// the feed and webhooks get `resource.rights_changed` for the Resources they read.
void log_policy_change(rights_actor::stateful_pointer<rights_state> self, const rights_config& cfg,
                       const std::string& version) {
  auto writer = cfg.directory ? cfg.directory->snapshot()->get<writer_actor>() : writer_actor{};
  if (!writer) return;
  storage::mutation logged = [version](storage::write_txn& tx) {
    storage::change_entry e;
    e.kind = storage::change_kind::policy;
    e.op = storage::change_op::policy_changed;
    e.id = version;
    e.version = version;
    e.at_ms = domain::now_ms();
    tx.log_change(e);
    return true;
  };
  self->request(writer, std::chrono::seconds{30}, write_atom_v, std::move(logged))
    .then([](bool) {},
          [version](caf::error& e) {
            spdlog::warn("rights: the policy change to {} was not logged in the change log ({})", version, to_string(e));
          });
}

}  // namespace

rights_actor::behavior_type rights(rights_actor::stateful_pointer<rights_state> self,
                                   std::shared_ptr<const rights_config> cfg) {
  accept_fault_delays(self);
  auto& st = self->state;
  // The service checked the file at start; a restarted resolver whose file has turned invalid
  // since falls back to the built-in policy (and logs it) rather than not starting.
  st.policy.emplace(watched_policy(*cfg));
  st.policy->start();
  if (cfg->current) cfg->current->set(st.policy->current());
  if (cfg->epoch) ++*cfg->epoch;  // a restarted resolver may have missed a policy change
  if (cfg->outside_changes) ++*cfg->outside_changes;
  if (st.policy->watching()) schedule_recheck(self);
  return {
    [self, cfg](resolve_atom, const std::string& tenant, const std::string& work) -> caf::result<domain::resolved_rights> {
      try {
        return resolve(self->state, *cfg, tenant, work, domain::now_seconds());
      } catch (const std::exception& e) {
        return storage_error("rights", e);
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
        return storage_error("rights", e);
      }
    },
    [self, cfg](possible_atom, const std::string& tenant, const std::string& usage) -> caf::result<bool, bool> {
      try {
        // As for resolutions: the epoch before the contracts.
        auto epoch = cfg->epoch ? cfg->epoch->load() : 0;
        auto possible = domain::possible_content_answers(domain::content_use{usage, {}},
                                                         cfg->store->contracts().usages_named(tenant),
                                                         self->state.policy->current());
        if (cfg->possible) {
          auto now = domain::now_seconds();
          cfg->possible->insert(possible_cache_key(tenant, usage, epoch), {possible.allowed, possible.refused},
                                now + possible_cache_seconds, now);
        }
        return caf::make_result(possible.allowed, possible.refused);
      } catch (const std::exception& e) {
        return storage_error("rights", e);
      }
    },
    [self, cfg](recheck_atom) {
      recheck(self, "rights", [&] {
        auto& policy = *self->state.policy;
        if (!policy.recheck()) return;
        if (cfg->current) cfg->current->set(policy.current());
        if (cfg->epoch) ++*cfg->epoch;  // every cached resolution used the old policy
        if (cfg->outside_changes) ++*cfg->outside_changes;
        log_policy_change(self, *cfg, policy.current().version);
      });
    },
  };
}

}  // namespace cl::actors
