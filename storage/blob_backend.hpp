#pragma once
/// The object store behind the blob broker (issue 13), as the broker needs it: presigned URLs for
/// clients, and the few server-side calls (multipart create/complete/abort, list parts, stat with
/// the store-computed SHA-256). One protocol, S3; two implementations chosen by configuration:
/// the embedded store (calls `object_files` directly, presigns locally) and, next, any S3 service
/// over HTTP. Presigned URLs sign only `host`, so any HTTP client can use them.

#include "storage/object_files.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cl::storage {

class blob_backend {
public:
  virtual ~blob_backend() = default;
  /// A URL a client PUTs the whole object to, valid `seconds` from `now`.
  virtual std::string presign_put(const std::string& key, std::int64_t now, std::int64_t seconds) const = 0;
  /// A URL a client PUTs part `number` of multipart upload `upload_id` to.
  virtual std::string presign_part(const std::string& key, const std::string& upload_id, int number, std::int64_t now,
                                   std::int64_t seconds) const = 0;
  /// A URL a client GETs the object from.
  virtual std::string presign_get(const std::string& key, std::int64_t now, std::int64_t seconds) const = 0;

  virtual std::string create_multipart(const std::string& key, const std::string& content_type) = 0;
  /// The parts stored so far: (number, info).
  virtual std::vector<std::pair<int, object_info>> list_parts(const std::string& upload_id) const = 0;
  /// Assembles every stored part in order (the broker completes with what the store holds).
  virtual complete_error complete_multipart(const std::string& upload_id, std::uint64_t min_part_size,
                                            object_info& out) = 0;
  virtual bool abort_multipart(const std::string& upload_id) = 0;
  /// The object's size and store-computed SHA-256, if it exists.
  virtual std::optional<object_info> stat(const std::string& key) const = 0;
};

/// The embedded store: `files` for the server-side calls, URLs under `public_url` (e.g.
/// http://127.0.0.1:8081) signed for `host` with the store's own credentials.
struct embedded_backend_config {
  std::shared_ptr<object_files> files;
  std::string public_url;  ///< scheme://host[:port], no trailing slash
  std::string host;        ///< as clients will send it: host[:port]
  std::string bucket, region, access_key_id, secret_access_key;
};
std::unique_ptr<blob_backend> make_embedded_backend(embedded_backend_config cfg);

}  // namespace cl::storage
