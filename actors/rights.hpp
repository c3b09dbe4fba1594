#pragma once
/// The rights resolver actor: answers every read's `rights`. With no contracts in the system yet,
/// every Resource resolves to `usable: false` with empty term lists.

#include "actors/interfaces.hpp"

#include <caf/stateful_actor.hpp>

namespace cl::actors {

struct rights_state {
  static constexpr const char* name = "rights";
};

/// The rights resolver's behavior.
rights_actor::behavior_type rights(rights_actor::stateful_pointer<rights_state> self);

}  // namespace cl::actors
