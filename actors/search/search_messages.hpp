#pragma once
/// The search route group's actor interfaces and messages (spec 4.5.3): the indexer and the
/// search session actors. Declared here, in the group's own files; the actor directory publishes
/// them like any other (`concern_handles::get<search_session_actor>()`).

#include "actors/type_ids.hpp"
#include "domain/search_session.hpp"
#include "storage/search/types.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/type_id.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <optional>
#include <string>
#include <vector>

// The group's atoms (in CAF 0.17.6 CAF_ADD_ATOM defines an atom_constant and its _v value; no type id block needed).
CAF_ADD_ATOM(contentlake, cl::actors, index_atom, "index")
CAF_ADD_ATOM(contentlake, cl::actors, search_atom, "search")
CAF_ADD_ATOM(contentlake, cl::actors, answered_atom, "answered")

namespace cl::actors {

/// What one answer asks of one of a search's two ranked lists: up to `candidates` of them (0: none)
/// past `exclude`, ids this answer has already taken or passed over.
struct search_stream_call {
  std::vector<std::string> exclude;
  std::size_t candidates = 0;
};
/// One ranked list's next candidates, best first; `exhausted`: nothing ranked after them.
struct search_stream {
  std::vector<storage::search_hit> hits;
  bool exhausted = true;
};
/// One page asked of the search session actor: a new search (`search_id` empty) or the next page
/// of one, for a caller whose grants count through `principals`. Layer 3 splits a search in two
/// lists: `full` ranks the query over titles and text (the hits whose content the caller may use
/// are taken from it), `metadata` ranks it over titles alone (the hits whose content it may not).
struct search_call {
  domain::session_owner owner;
  std::string search_id;
  domain::search_request request;  ///< a new search only
  /// `search_id` is this answer's new session, not stored yet (a later round of its first page):
  /// ranked like a new search; the page's record of its answered hits opens it.
  bool unopened = false;
  std::vector<std::string> principals;
  search_stream_call full, metadata;
  /// Index rankings this call may run in all, both lists and every retry (the answer's budget).
  int budget = 1;
  /// The change-log position the request sent (`Content-Lake-Position`; 0: none): the page is
  /// ranked on an index that applied it (waiting a bounded time), as is a continued session's
  /// page on an index at least where the index that opened it was.
  std::uint64_t at_least = 0;
};
/// The search session actor's answer: the error to answer with (unknown or expired session, a
/// query Xapian cannot parse), or the session, its request and each list's next candidates.
struct search_outcome {
  std::optional<domain::api_error> error;
  std::string search_id;  ///< a new search: its id, stored once the page records its hits
  domain::search_request request;
  std::uint64_t position = 0;  ///< a new search: the position of the index that ranked it
  search_stream full, metadata;
  std::size_t answered_before = 0;  ///< hits the session answered before this page
  bool session_full = false;        ///< the session answered as many hits as it may
  int spent = 0;                    ///< index rankings this call ran (of `search_call::budget`)
  std::uint64_t behind = 0;         ///< internal: the position the index must apply first
};
/// The hits a page answers, recorded in its session (`opens`: the session is the page's own, new,
/// opened with them on an index at `position`).
struct session_record {
  domain::session_owner owner;
  std::string search_id;
  std::vector<std::string> hits;
  bool opens = false;
  domain::search_request request;
  std::uint64_t position = 0;
};
/// Search indexer (the search route group): applies the change log to the Xapian index.
using indexer_actor = caf::typed_actor<
  // Internal: applies what the change log holds beyond the index (sent to itself periodically).
  caf::reacts_to<index_atom>>;

/// Search sessions (the search route group, spec 4.5.3): hold the sessions (whose, which hits
/// they answered, when they expire) and run their queries on the Xapian index. One per directory
/// view, sharing one locked session store: on the scheduler's threads (queries are CPU work, like
/// the readers' LMDB reads); where the store is PostgreSQL (its reads and writes block), a front per
/// view over detached workers (`search_session_front`).
using search_session_actor = caf::typed_actor<
  // Internal: looks again whether the index applied what waiting pages need (sent to itself).
  caf::reacts_to<index_atom>,
  // A page of candidates for a new or continued search, ranked past what the session answered.
  caf::replies_to<search_atom, search_call>::with<search_outcome>,
  // The hit ids an answer shows -> those not answered before (recorded now; a concurrent page of
  // the same session may have taken the others). A new search's session opens with them.
  caf::replies_to<answered_atom, session_record>::with<std::vector<std::string>>>;

/// The sweeper of a shared session store (`domain::session_store::sweep`, PostgreSQL), one per node,
/// detached: forgets sessions long idle and applies the bounds every few seconds, off the pages' path.
using search_sweeper_actor = caf::typed_actor<
  // Internal: sweeps now and again after the store's interval (sent to itself).
  caf::reacts_to<prune_atom>>;

}  // namespace cl::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::search_call)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::search_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::session_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::domain::session_owner)
