#include "actors/rights.hpp"

#include "domain/records.hpp"

#include <caf/all.hpp>

namespace cl::actors {

rights_actor::behavior_type rights(rights_actor::stateful_pointer<rights_state>) {
  return {
    [](resolve_atom, const std::string&, const std::string&) {
      return domain::no_contract_rights(domain::iso8601_now());
    },
    [](resolve_atom, const std::string&, const std::vector<std::string>& works) {
      auto at = domain::iso8601_now();
      return std::vector<domain::resolved_rights>(works.size(), domain::no_contract_rights(at));
    },
  };
}

}  // namespace cl::actors
