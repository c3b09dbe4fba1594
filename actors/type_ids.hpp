#pragma once
/// Atoms and message-type whitelisting for every actor in the service, in one place.
/// All messaging is local (one process), so value types are whitelisted rather than serialised;
/// register inspectable types here before anything crosses a process boundary.

#include "domain/exchange.hpp"
#include "domain/idempotency.hpp"
#include "domain/principal.hpp"
#include "domain/rights.hpp"
#include "storage/stores.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/type_id.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cl::actors {

/// Outcome of verifying a bearer token: the principal, or the auth error to answer with.
struct auth_outcome {
  bool ok = false;
  domain::principal who;
  domain::api_error error;
};

/// Whether the rate limiter admits one request of a client, and how long to wait if not.
struct rate_decision {
  bool admitted = true;
  int retry_after_seconds = 0;
};

/// A stored record's canonical JSON bytes, or nothing.
struct fetch_outcome {
  bool found = false;
  std::string json;
  std::uint64_t log_position = 0;  ///< the change log's last sequence, read before the record (Resource reads)
};

/// A page of a typed list query: (id, record) in order.
struct scan_result {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string resume_after;  ///< last id examined (filtered queries)
  bool exhausted = false;    ///< nothing after `resume_after`
  std::uint64_t log_position = 0;  ///< the change log's last sequence when the page was read (read before it)
};

/// The ledger's answer to a request with an Idempotency-Key, before it executes.
struct ledger_verdict {
  /// unchecked: held like fresh, but not looked up (the request's only effect is its guarded
  /// write, whose own ledger record finds an answer stored under the key; actors/ledger.hpp).
  enum kind_t : int { fresh = 0, replay = 1, mismatch = 2, in_use = 3, unchecked = 4 };
  int kind = fresh;
  domain::stored_answer answer;  ///< replay: what the first execution answered
  /// replay: a change-log position at or past the commit that stored the answer (read after it),
  /// so the replay's `Content-Lake-Position` covers the write on any node.
  std::uint64_t at = 0;
};

/// What a request that held an Idempotency-Key settled under it, told to the ledger as it lets go.
enum ledger_settlement : int {
  unsettled = 0,   ///< nothing is stored under the key (a refusal before any write, a failure)
  stored = 1,      ///< the request's answer is stored under the key
  replayed = 2,    ///< an answer stored under the key before answered it
  mismatched = 3,  ///< the key was stored for another request (422)
};

/// A JWKS document fetched from the issuer, or why it could not be.
struct jwks_document {
  bool ok = false;
  std::string json;
  std::string error;
};


}  // namespace cl::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::auth_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::rate_decision)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::fetch_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::jwks_document)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::ledger_verdict)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::domain::ledger_key)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::mutation)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::scan_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::version_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::record_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::activity_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::version_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::catalog_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::resource_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::activity_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::contract_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::grant_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::grant_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::contract_versions_query)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::domain::resolved_rights)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cl::domain::resolved_rights>)

CAF_BEGIN_TYPE_ID_BLOCK(contentlake, caf::first_custom_type_id)
  CAF_ADD_ATOM(contentlake, cl::actors, verify_atom, "verify")
  CAF_ADD_ATOM(contentlake, cl::actors, admit_atom, "admit")
  CAF_ADD_ATOM(contentlake, cl::actors, fetch_atom, "fetch")
  CAF_ADD_ATOM(contentlake, cl::actors, jwks_atom, "jwks")
  CAF_ADD_ATOM(contentlake, cl::actors, recheck_atom, "recheck")
  CAF_ADD_ATOM(contentlake, cl::actors, write_atom, "write")
  CAF_ADD_ATOM(contentlake, cl::actors, flush_atom, "flush")
  CAF_ADD_ATOM(contentlake, cl::actors, resolve_atom, "resolve")
  CAF_ADD_ATOM(contentlake, cl::actors, check_atom, "check")
  CAF_ADD_ATOM(contentlake, cl::actors, principals_atom, "principals")
  CAF_ADD_ATOM(contentlake, cl::actors, list_atom, "list")
  CAF_ADD_ATOM(contentlake, cl::actors, group_atom, "group")
  CAF_ADD_ATOM(contentlake, cl::actors, begin_atom, "begin")
  CAF_ADD_ATOM(contentlake, cl::actors, release_atom, "release")
  CAF_ADD_ATOM(contentlake, cl::actors, prune_atom, "prune")
  CAF_ADD_ATOM(contentlake, cl::actors, possible_atom, "possible")
  CAF_ADD_ATOM(contentlake, cl::actors, reach_atom, "reach")
CAF_END_TYPE_ID_BLOCK(contentlake)
