#pragma once
/// Atoms and message-type whitelisting for every actor in the service, in one place.
/// All messaging is local (one process), so value types are whitelisted rather than serialised;
/// register inspectable types here before anything crosses a process boundary.

#include "domain/exchange.hpp"
#include "domain/idempotency.hpp"
#include "domain/principal.hpp"
#include "domain/rights.hpp"
#include "domain/search_session.hpp"
#include "storage/blob_store.hpp"
#include "storage/record_store.hpp"
#include "storage/search_types.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/type_id.hpp>

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
};

/// A page of a typed list query: (id, record) in order.
struct scan_result {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string resume_after;  ///< last id examined (filtered queries)
  bool exhausted = false;    ///< nothing after `resume_after`
};

/// The ledger's answer to a request with an Idempotency-Key, before it executes.
struct ledger_verdict {
  enum kind_t : int { fresh = 0, replay = 1, mismatch = 2, in_use = 3 };
  int kind = fresh;
  domain::stored_answer answer;  ///< replay: what the first execution answered
};

/// Who asks the blob broker: the token's tenant, subject and client.
struct blob_caller {
  std::string tenant, sub, client_id;
};

/// The blob broker's answer about an upload: an error to answer with, or the upload as it is to be
/// stored, the blob version a completion made (`version`, numbered in the writer's transaction) and
/// the JSON body of the answer.
struct blob_outcome {
  std::optional<domain::api_error> error;
  storage::upload_record upload;
  storage::blob_version version;
  bool recorded = false;  ///< completion: the upload was completed before; `version` is the stored one
  std::string body;
};

/// A blob reference of a location lookup: version 0 is the latest.
struct blob_lookup {
  std::string id;
  std::int64_t version = 0;
};

/// What the broker found for one lookup: the version (with a presigned GET URL), the blob's
/// uploader, and the Resources whose content references it (id, Work id; at most 100) unless the
/// caller is the uploader.
struct blob_found {
  bool exists = false;        ///< the version asked for exists
  std::string uploader;       ///< of the blob (empty: no version yet)
  storage::blob_version version;
  std::string url;
  std::int64_t expires_at = 0;
  std::vector<std::pair<std::string, std::string>> referenced_by;
};

/// A blocking store call the broker runs on a detached worker.
struct blob_job {
  std::function<blob_outcome()> run;
};

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
  std::vector<std::string> principals;
  search_stream_call full, metadata;
};
/// The search session actor's answer: the error to answer with (unknown or expired session, a
/// query Xapian cannot parse), or the session, its request and each list's next candidates.
struct search_outcome {
  std::optional<domain::api_error> error;
  std::string search_id;
  domain::search_request request;
  search_stream full, metadata;
  std::size_t answered_before = 0;  ///< hits the session answered before this page
  bool session_full = false;        ///< the session answered as many hits as it may
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
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::mutation)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_caller)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::search_call)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::search_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::domain::session_owner)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_lookup)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cl::actors::blob_lookup>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cl::actors::blob_found>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::upload_record)
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
  CAF_ADD_ATOM(contentlake, cl::actors, upload_atom, "upload")
  CAF_ADD_ATOM(contentlake, cl::actors, parts_atom, "parts")
  CAF_ADD_ATOM(contentlake, cl::actors, complete_atom, "complete")
  CAF_ADD_ATOM(contentlake, cl::actors, abort_atom, "abort")
  CAF_ADD_ATOM(contentlake, cl::actors, locate_atom, "locate")
  CAF_ADD_ATOM(contentlake, cl::actors, sweep_atom, "sweep")
  CAF_ADD_ATOM(contentlake, cl::actors, run_atom, "run")
  CAF_ADD_ATOM(contentlake, cl::actors, index_atom, "index")
  CAF_ADD_ATOM(contentlake, cl::actors, search_atom, "search")
  CAF_ADD_ATOM(contentlake, cl::actors, answered_atom, "answered")
  CAF_ADD_ATOM(contentlake, cl::actors, possible_atom, "possible")
CAF_END_TYPE_ID_BLOCK(contentlake)
