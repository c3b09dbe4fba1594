#pragma once
/// The log gate (read your writes, `Content-Lake-Position`): a request whose position this node's
/// reads do not reflect yet asks it, so the catch-up (on PostgreSQL a read of the change log) waits
/// on the gate's thread, never on a coordinator's.

#include "actors/interfaces.hpp"
#include "storage/record_store.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>

namespace cl::actors {

struct log_gate_state {
  static constexpr const char* name = "log-gate";
};

/// The gate's behavior over `store`.
log_gate_actor::behavior_type log_gate(log_gate_actor::stateful_pointer<log_gate_state> self,
                                       std::shared_ptr<storage::record_store> store);

}  // namespace cl::actors
