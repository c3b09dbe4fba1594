#include "actors/resource_store.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

resource_store_actor::behavior_type resource_store(resource_store_actor::stateful_pointer<resource_store_state>,
                                                   std::shared_ptr<storage::record_store> store) {
  return {
    [store](fetch_atom, const std::string& tenant, const std::string& id) -> caf::result<fetch_outcome> {
      try {
        auto json = store->get_resource(tenant, id);
        if (!json) return fetch_outcome{false, {}};
        return fetch_outcome{true, std::move(*json)};
      } catch (const std::exception& e) {
        // A storage failure is the backend being unavailable, not a missing Resource.
        spdlog::error("resource_store: read failed: {}", e.what());
        return caf::make_error(caf::sec::runtime_error, "storage read failed");
      }
    },
  };
}

}  // namespace cl::actors
