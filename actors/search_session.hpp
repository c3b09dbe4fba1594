#pragma once
/// The search session actor (the search route group, spec 4.5.3): holds the search sessions
/// (domain/search_session.hpp: whose, which hits they answered, when they expire) and runs their
/// queries on the Xapian index the indexer keeps (storage/search_index.hpp). Layer 2 is part of
/// every query (the caller's principals), so candidates are only what the caller may read; rights
/// (layer 3) are resolved by the plan (actors/search_plans.cpp) at answer time, never here.

#include "actors/interfaces.hpp"
#include "domain/search_session.hpp"
#include "storage/search_index.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>

namespace cl::actors {

struct search_session_config {
  std::shared_ptr<storage::search_index> index;
  domain::session_limits limits;
};

struct search_session_state {
  static constexpr const char* name = "search-session";
  std::unique_ptr<domain::session_store> sessions;
};

search_session_actor::behavior_type search_session(search_session_actor::stateful_pointer<search_session_state> self,
                                                   std::shared_ptr<const search_session_config> cfg);

}  // namespace cl::actors
