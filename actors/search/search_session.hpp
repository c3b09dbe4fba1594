#pragma once
/// The search session actors (the search route group, spec 4.5.3): hold the search sessions
/// (domain/search_session.hpp: whose, which hits they answered, when they expire) and runs their
/// queries on the Xapian index the indexer keeps (storage/search/index.hpp). Layer 2 is part of
/// every query (the caller's principals), so candidates are only what the caller may read; rights
/// (layer 3) are resolved by the plan (actors/search/search_plans.cpp) at answer time, never here.

#include "actors/interfaces.hpp"
#include "actors/metrics.hpp"
#include "actors/search/search_messages.hpp"
#include "domain/search_session.hpp"
#include "storage/stores.hpp"
#include "storage/search/index.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <chrono>
#include <vector>

#include <memory>

namespace cl::actors {

struct search_session_config {
  std::shared_ptr<storage::search_index> index;
  std::shared_ptr<storage::record_store> store;  ///< grants read again for every candidate
  domain::session_limits limits;
  /// The sessions every search session actor shares (several run, one per directory view, so that
  /// queries run in parallel); they outlive a restart of any one actor. In memory, or on
  /// PostgreSQL shared by every node.
  std::shared_ptr<domain::session_store> sessions;
};

/// A page waiting for this node's index to apply a position (read your writes, a session opened
/// on a node whose index was further).
struct waiting_page {
  search_call call;
  caf::typed_response_promise<search_outcome> promise;
  std::uint64_t position = 0;
  std::chrono::steady_clock::time_point deadline;
};

struct search_session_state {
  static constexpr const char* name = "search-session";
  std::vector<waiting_page> waiting;
};

/// How long a page waits for the index to apply a position before it answers 503
/// SEARCH_INDEX_BEHIND, and how often it looks.
inline constexpr std::chrono::milliseconds index_wait{1000};
inline constexpr std::chrono::milliseconds index_wait_step{10};

search_session_actor::behavior_type search_session(search_session_actor::stateful_pointer<search_session_state> self,
                                                   std::shared_ptr<const search_session_config> cfg);

/// What the sweeper of a shared session store needs.
struct search_sweeper_config {
  std::shared_ptr<domain::session_store> sessions;
  metrics::counter sweeps;    ///< sweeps run (a default one counts nothing)
  metrics::counter vacuums;   ///< of them, those that vacuumed the store's table
};

/// Sweeps `sessions` at once and then every `sweep_every_ms()` (a store whose interval is 0 is never
/// swept). A sweep that fails (the database away) is logged, and the next comes on time.
search_sweeper_actor::behavior_type search_session_sweeper(search_sweeper_actor::pointer self,
                                                           std::shared_ptr<const search_sweeper_config> cfg);

/// Several search session actors behind one handle (where a page's session and grant reads are
/// round trips that block a worker's thread: PostgreSQL): each page and each record of answered
/// hits goes to the next worker in turn. Linked to them: one that fails takes the others and the
/// front down, and the supervisor starts them again together.
search_session_actor::behavior_type search_session_front(search_session_actor::pointer self,
                                                         std::vector<search_session_actor> workers);

}  // namespace cl::actors
