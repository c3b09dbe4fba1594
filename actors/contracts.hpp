#pragma once
/// The contracts actor: reads of contract versions for the contracts route group
/// (`/v0/contracts`, plans in actors/contract_plans.cpp). Writes go through the writer like every
/// other mutation. Contracts are read through the contract store (storage/contract_store.hpp).

#include "actors/interfaces.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace cl::actors {

struct contracts_state {
  static constexpr const char* name = "contracts";
};

contracts_actor::behavior_type contracts(contracts_actor::stateful_pointer<contracts_state> self,
                                         std::shared_ptr<storage::record_store> store);

}  // namespace cl::actors
