#pragma once
/// The rights resolver actor: answers every read's `rights`. With no contracts in the system yet,
/// every Resource resolves to `usable: false` with empty term lists.

#include "actors/interfaces.hpp"
#include "actors/shared_cache.hpp"

#include <caf/stateful_actor.hpp>

namespace cl::actors {

struct rights_state {
  static constexpr const char* name = "rights";
};

using rights_cache = shared_cache<domain::resolved_rights>;

/// The rights resolver's behavior. Every resolution it makes also goes into `cache` (may be
/// null), valid for as long as the resolution holds, so coordinators can skip asking.
rights_actor::behavior_type rights(rights_actor::stateful_pointer<rights_state> self,
                                   std::shared_ptr<rights_cache> cache);

}  // namespace cl::actors
