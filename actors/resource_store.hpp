#pragma once
/// The resource store actor: reads Resources of a tenant from the record store.

#include "actors/interfaces.hpp"
#include "storage/record_store.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>

namespace cl::actors {

struct resource_store_state {
  static constexpr const char* name = "resource_store";
};

/// The resource store's behavior over `store`.
resource_store_actor::behavior_type resource_store(resource_store_actor::stateful_pointer<resource_store_state> self,
                                                   std::shared_ptr<storage::record_store> store);

}  // namespace cl::actors
