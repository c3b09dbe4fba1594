#include "actors/log_gate.hpp"

#include "actors/fault_hooks.hpp"
#include "actors/store_reads.hpp"

#include <caf/all.hpp>

namespace cl::actors {

log_gate_actor::behavior_type log_gate(log_gate_actor::stateful_pointer<log_gate_state> self,
                                       std::shared_ptr<storage::record_store> store) {
  accept_fault_delays(self);
  return {
    [store](reach_atom, std::uint64_t position) -> caf::result<bool> {
      return read_or_fail("log gate", [&] { return store->reflects(position); });
    },
  };
}

}  // namespace cl::actors
