#pragma once
/// The blob broker actor (the blobs route group, spec 4.4 and 3.2): owns the object store client
/// (storage/objects/blob_backend.hpp), reads the upload and version records (storage/blob_store.hpp),
/// hands out presigned URLs, and sweeps abandoned uploads. Binary content never passes through
/// it: clients PUT and GET the store directly. Store calls that block (disk for the embedded store,
/// HTTP for S3) run on one detached worker per call, so the broker keeps answering; records are
/// written through the writer by the plans (actors/blobs/blob_plans.cpp) and by the sweep.

#include "actors/directory.hpp"
#include "actors/blobs/blob_messages.hpp"
#include "actors/interfaces.hpp"
#include "domain/blob_upload.hpp"
#include "storage/objects/blob_backend.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cl::storage {
class lease_keeper;
}

namespace cl::actors {

struct blob_broker_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<storage::blob_backend> backend;
  std::shared_ptr<actor_directory> directory;  ///< where the sweep finds the writer
  domain::upload_limits limits;
  std::int64_t upload_url_ttl_seconds = 3600;
  std::int64_t download_url_ttl_seconds = 900;  ///< spec 4.4: 15 minutes
  std::chrono::milliseconds sweep_interval{60000};
  std::size_t max_referencing = 100;  ///< Resources examined per blob when deciding who may read it
  /// The sweep runs only while this node holds the `upload-expiry` lease (null: always, one node).
  std::shared_ptr<const storage::lease_keeper> leases{};
};

struct blob_broker_state {
  static constexpr const char* name = "blob-broker";
  /// Completions running on a worker, by upload: a second request for the same upload joins the
  /// first instead of assembling the same parts twice.
  std::map<std::string, std::vector<caf::typed_response_promise<blob_outcome>>> completing;
};

blob_broker_actor::behavior_type blob_broker(blob_broker_actor::stateful_pointer<blob_broker_state> self,
                                             std::shared_ptr<const blob_broker_config> cfg);

/// The worker: runs one job and quits.
blob_worker_actor::behavior_type blob_worker(blob_worker_actor::pointer self);

/// `{"id","version","size","content_type","checksum":"sha256:...","created"}`.
std::string blob_version_json(const storage::blob_version& v);

/// The object key of an upload's bytes: `<tenant>/<blob id>/<upload id>`.
std::string blob_object_key(const std::string& tenant, const std::string& blob_id, const std::string& upload_id);

/// A mutation that records expired uploads as aborted (those still in progress and expired at
/// `now`, at most `limit`); `aborted` receives the ones it changed, for the store to release.
storage::mutation abort_expired_uploads(std::int64_t now, std::size_t limit,
                                        std::shared_ptr<std::vector<storage::upload_record>> aborted);

}  // namespace cl::actors
