#pragma once
/// The change feed's actor interface and messages (the changes route group, issue 29).

#include "actors/type_ids.hpp"
#include "domain/errors.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// The group's atoms (in CAF 0.17.6 CAF_ADD_ATOM defines an atom_constant and its _v value; no type id block needed).
CAF_ADD_ATOM(contentlake, cl::actors, changes_atom, "changes")
CAF_ADD_ATOM(contentlake, cl::actors, committed_atom, "committed")
CAF_ADD_ATOM(contentlake, cl::actors, expire_atom, "expire")

namespace cl::actors {

/// One poll of the feed: the caller's tenant and principals (layer 2 at delivery), the event types
/// asked for (empty: all), the cursor to resume after (empty: from now), and the page's bound.
struct changes_poll {
  std::string tenant;
  std::vector<std::string> principals;
  std::vector<std::string> types;
  std::string since;
  std::size_t page_size = 100;
  std::int64_t wait_ms = 0;  ///< a long poll: when nothing is the caller's yet, wait this long for a change
  bool cursor_per_event = false;  ///< each event carries its own cursor (an event stream)
  /// The first poll of an event stream: it takes one of the held slots (`held_requests`) and
  /// answers it with its page (`changes_page::slot`), which the stream keeps while it lasts.
  bool opens_stream = false;
  std::string holder;  ///< who holds it: the tenant and subject (the per-principal limit)
  std::string client;  ///< the token's `client_id` (the per-client limit)
  /// Set once the client closed its connection: a waiting poll then ends at once. May be null.
  std::shared_ptr<const std::atomic<bool>> peer_gone;
};

/// One event as the feed answers it (thin: what changed, never its content or title).
struct change_event {
  std::string id;           ///< `evt_...`: stable, opaque
  std::string type;         ///< `resource.created`, ...
  std::string subject;      ///< `resource_id` or `work_id`
  std::string subject_id;
  std::string version, hash;
  std::int64_t at_ms = 0;
  std::string transaction;  ///< `txn_...`: the same for the events of one write
  std::string cursor;       ///< the feed's position right after this event (an event stream's `id:`)
  std::uint64_t seq = 0;    ///< its change-log entry (never shown: the sequence is global)
  std::string within;       ///< inside that entry, where this event stands (a contract change's Resources)
  std::string contract_id;  ///< `resource.rights_changed`: the contract whose change moved the rights
  std::string policy_version;  ///< `resource.rights_changed` by a platform policy change: the new policy's version
};

/// A poll's answer: the events, the cursor after the last entry scanned (also when none was the
/// caller's: a bookmark), or the error (a cursor that does not open, or one past retention).
struct changes_page {
  std::optional<domain::api_error> error;
  std::vector<change_event> events;
  std::string next_cursor;
  bool closing = false;  ///< the service drains: an event stream ends now
  std::int64_t stream_ms = 0;  ///< how long an event stream lasts before its client reconnects (`changes.stream_seconds`)
  std::shared_ptr<const void> slot;  ///< an opened stream's held slot: given back when the last copy goes
};

/// The change feed (the changes route group): reads the change log for one caller at a time.
using changes_actor = caf::typed_actor<
  caf::replies_to<changes_atom, changes_poll>::with<changes_page>,
  // Internal: the record store committed changes up to this sequence (its commit listener).
  caf::reacts_to<committed_atom, std::uint64_t>,
  // Internal: a waiting poll's time is up (its id).
  caf::reacts_to<expire_atom, std::uint64_t>>;

}  // namespace cl::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::changes_poll)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::changes_page)
