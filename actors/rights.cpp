#include "actors/rights.hpp"

#include "actors/directory.hpp"
#include "domain/records.hpp"

#include <caf/all.hpp>

#include <chrono>

namespace cl::actors {

namespace {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

/// With no contracts, a resolution holds until `resolved_at` (whole seconds) would change.
domain::resolved_rights resolve(rights_cache* cache, const std::string& tenant, const std::string& work,
                                const std::string& at, std::int64_t now) {
  auto r = domain::no_contract_rights(at);
  if (cache) cache->insert(rights_cache_key(tenant, work), r, now + 1, now);
  return r;
}

}  // namespace

rights_actor::behavior_type rights(rights_actor::stateful_pointer<rights_state>, std::shared_ptr<rights_cache> cache) {
  return {
    [cache](resolve_atom, const std::string& tenant, const std::string& work) {
      return resolve(cache.get(), tenant, work, domain::iso8601_now(), unix_now());
    },
    [cache](resolve_atom, const std::string& tenant, const std::vector<std::string>& works) {
      auto at = domain::iso8601_now();
      auto now = unix_now();
      std::vector<domain::resolved_rights> out;
      out.reserve(works.size());
      for (const auto& w : works) out.push_back(resolve(cache.get(), tenant, w, at, now));
      return out;
    },
  };
}

}  // namespace cl::actors
