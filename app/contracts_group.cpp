// Route group: contracts and their versions (`/v0/contracts`, a preview addition). One actor of
// its own, the contracts actor (reads of contract versions); writes go through the core's writer.

#include "actors/contracts.hpp"
#include "actors/plans.hpp"
#include "app/groups.hpp"
#include "storage/backend.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace cl::app {

namespace {

caf::expected<std::vector<actors::child_spec>> spawn_contracts(const startup& s) {
  if (!s.store) return startup_failure("the contracts actor needs the record store");
  return std::vector<actors::child_spec>{actors::supervised<actors::contracts_actor>(
    "contracts", [store = s.store, blocking = s.backend->traits().reads_block](caf::actor_system& sys) {
      return spawn_reading(sys, blocking, actors::contracts, store);
    })};
}

}  // namespace

void register_contracts(registry& r) {
  r.add_routes({
    http::write_only({"POST", "/v0/contracts", "contracts.write", &actors::plan_create_contract, nullptr}),
    {"GET", "/v0/contracts", "contracts.read", &actors::plan_list_contracts, nullptr},
    {"GET", "/v0/contracts/{id}", "contracts.read", &actors::plan_get_contract, nullptr},
    http::write_only({"POST", "/v0/contracts/{id}/versions", "contracts.write", &actors::plan_create_contract_version, nullptr}),
    {"GET", "/v0/contracts/{id}/versions", "contracts.read", &actors::plan_list_contract_versions, nullptr},
  });
  r.add_actors("contracts", &spawn_contracts);
}

}  // namespace cl::app
