#include "actors/contracts.hpp"
#include "actors/fault_hooks.hpp"

#include "actors/store_reads.hpp"

#include <caf/all.hpp>

namespace cl::actors {

contracts_actor::behavior_type contracts(contracts_actor::stateful_pointer<contracts_state> self,
                                         std::shared_ptr<storage::record_store> store) {
  accept_fault_delays(self);
  return {
    [store](fetch_atom, const std::string& tenant, const std::string& id,
            std::int64_t version) -> caf::result<fetch_outcome> {
      return read_or_fail("contracts", [&] {
        return found(version == 0 ? store->contracts().latest(tenant, id) : store->contracts().version(tenant, id, version));
      });
    },
    [store](list_atom, const storage::contract_query& q) -> caf::result<scan_result> {
      return read_or_fail("contracts", [&] { return listed(*store, [&] { return store->contracts().list(q); }); });
    },
    [store](list_atom, const storage::contract_versions_query& q) -> caf::result<scan_result> {
      return read_or_fail("contracts", [&] { return listed(*store, [&] { return store->contracts().versions(q); }); });
    },
  };
}

}  // namespace cl::actors
