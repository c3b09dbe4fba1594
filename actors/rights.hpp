#pragma once
/// The rights resolver actor: answers every read's `rights` (spec 2.3) with `resolve_rights`
/// over the contracts that list the Work, the platform policy (config/policy.json, re-read on
/// change) and the current time. Every resolution also goes into the shared rights cache, valid
/// until the next window edge or the end of the current second, whichever comes first, and only
/// for the current rights epoch.

#include "actors/directory.hpp"
#include "actors/interfaces.hpp"
#include "actors/shared_cache.hpp"
#include "domain/rights.hpp"
#include "config/watched_config.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <atomic>
#include <memory>
#include <string>

namespace cl::actors {

/// Resolutions are shared, not copied: a hit costs a reference count, not a copy of the JSON.
using rights_cache = shared_cache<std::shared_ptr<const domain::resolved_rights>>;
/// `possible` answers (allowed somewhere, refused somewhere) by tenant and use: they change only
/// with the tenant's contracts or the policy, both of which bump the epoch.
using possible_cache = shared_cache<std::pair<bool, bool>>;

struct rights_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<rights_cache> cache;                  ///< may be null
  std::shared_ptr<possible_cache> possible;             ///< may be null
  std::shared_ptr<std::atomic<std::uint64_t>> epoch;    ///< bumped on a policy change
  std::shared_ptr<std::atomic<std::uint64_t>> outside_changes;  ///< bumped on a policy change (edge purge)
  std::string policy_file;                              ///< watched; empty: `builtin_policy` only
  domain::platform_policy builtin_policy;               ///< used when the file is unset or unreadable
  std::shared_ptr<policy_holder> current;               ///< where the policy in force is published
  /// Where the writer is found: a policy change is logged (`change_kind::policy`) for the change
  /// feed's and webhooks' `resource.rights_changed`. Null: not logged.
  std::shared_ptr<actor_directory> directory;
};

/// Resolves the rights of `work` (empty: a staged Resource) from the latest versions of the
/// contracts that list it (`contract_records`) under `policy` at Unix second `now`.
domain::resolved_rights resolve_work(const std::string& work, const std::vector<std::string>& contract_records,
                                     const domain::platform_policy& policy, std::int64_t now);

/// The platform policy file as watched by the resolver: unset or missing at start means the
/// built-in policy; a file that disappears later leaves the policy in force.
config::watched_config<domain::platform_policy> watched_policy(const rights_config& cfg);

struct rights_state {
  static constexpr const char* name = "rights";
  std::optional<config::watched_config<domain::platform_policy>> policy;
};

/// The rights resolver's behavior.
rights_actor::behavior_type rights(rights_actor::stateful_pointer<rights_state> self,
                                   std::shared_ptr<const rights_config> cfg);

}  // namespace cl::actors
