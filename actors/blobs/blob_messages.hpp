#pragma once
/// The blobs route group's actor interfaces and messages (spec 4.4): the blob broker and its
/// detached workers. Declared here, in the group's own files; the actor directory publishes them
/// like any other (`concern_handles::get<blob_broker_actor>()`).

#include "actors/type_ids.hpp"
#include "domain/blob_upload.hpp"
#include "storage/blob_store.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/type_id.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// The group's atoms (in CAF 0.17.6 CAF_ADD_ATOM defines an atom_constant and its _v value; no type id block needed).
CAF_ADD_ATOM(contentlake, cl::actors, upload_atom, "upload")
CAF_ADD_ATOM(contentlake, cl::actors, parts_atom, "parts")
CAF_ADD_ATOM(contentlake, cl::actors, complete_atom, "complete")
CAF_ADD_ATOM(contentlake, cl::actors, abort_atom, "abort")
CAF_ADD_ATOM(contentlake, cl::actors, locate_atom, "locate")
CAF_ADD_ATOM(contentlake, cl::actors, sweep_atom, "sweep")
CAF_ADD_ATOM(contentlake, cl::actors, run_atom, "run")

namespace cl::actors {

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

/// Blob broker (the blobs route group, spec 4.4): owns the object store client, reads the upload
/// and version records, hands out presigned URLs and runs the sweep of abandoned uploads. Store
/// calls that block (disk, HTTP) run on detached workers; records are written by the writer.
using blob_broker_actor = caf::typed_actor<
  // (caller, the validated request) -> the upload to store and the 201 answer, or the error.
  caf::replies_to<upload_atom, blob_caller, domain::upload_request>::with<blob_outcome>,
  // (caller, upload id, first part) -> fresh URLs, the stored parts, the upload with its new expiry.
  caf::replies_to<parts_atom, blob_caller, std::string, std::int32_t>::with<blob_outcome>,
  // (caller, upload id, declared SHA-256 hex) -> the blob version the store verified, or the error
  // (the upload stays in progress).
  caf::replies_to<complete_atom, blob_caller, std::string, std::string>::with<blob_outcome>,
  // An upload now recorded as aborted: closes its key and releases its parts or object at the
  // store; answered once the store refuses the upload's URLs (or with the store's error).
  caf::replies_to<abort_atom, storage::upload_record>::with<blob_outcome>,
  // (caller, lookups) -> what exists of each, in order, with presigned GET URLs.
  caf::replies_to<locate_atom, blob_caller, std::vector<blob_lookup>>::with<std::vector<blob_found>>,
  // Internal: aborts uploads whose URLs expired (sent to itself periodically).
  caf::reacts_to<sweep_atom>>;

/// A detached worker of the blob broker: runs one blocking store call, answers, and quits.
using blob_worker_actor = caf::typed_actor<caf::replies_to<run_atom, blob_job>::with<blob_outcome>>;

}  // namespace cl::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_caller)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::blob_lookup)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cl::actors::blob_lookup>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cl::actors::blob_found>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::storage::upload_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::domain::upload_request)
