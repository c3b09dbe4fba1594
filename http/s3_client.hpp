#pragma once
/// The blob broker's object store over HTTP: any S3-compatible service (AWS S3, MinIO, Ceph RGW,
/// Garage) as a `storage::blob_backend`. Presigning is local; the server-side calls (multipart
/// create, list parts, complete, abort; reading an object back to hash it) are blocking HTTP/1.1
/// requests signed with SigV4 in the `Authorization` header, made on the broker's workers. It lives
/// beside the HTTP layer (Beast) and reaches the broker only as the interface.

#include "storage/objects/blob_backend.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace cl::http {

struct s3_backend_config {
  std::string endpoint;  ///< http(s)://host[:port], no path
  std::string region = "us-east-1";
  std::string bucket;
  std::string access_key_id, secret_access_key;
  bool path_style = true;  ///< false: virtual-host style (bucket.host)
  std::chrono::milliseconds timeout{30000};  ///< per call (a read-back of a large object gets this per MiB)
  std::string ca_file;     ///< extra CA for https endpoints
};

/// Throws std::invalid_argument for an endpoint that is not http(s)://host[:port].
std::unique_ptr<storage::blob_backend> make_s3_backend(s3_backend_config cfg);

}  // namespace cl::http
