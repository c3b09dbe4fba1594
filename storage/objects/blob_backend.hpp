#pragma once
/// The object store behind the blob broker (issue 13), as the broker needs it: presigned URLs for
/// clients, and the few server-side calls (multipart create/complete/abort, list parts, stat with
/// the store-computed SHA-256). One protocol, S3; two implementations chosen by configuration:
/// the embedded store (calls `object_files` directly, presigns locally) and, next, any S3 service
/// over HTTP. Presigned URLs sign only `host`, so any HTTP client can use them.

#include "storage/objects/object_files.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cl::storage {

/// What an upload must have become: the size and SHA-256 its creator declared, and for a
/// multipart upload how many parts it has (numbered 1..part_count).
struct expected_object {
  std::uint64_t size = 0;
  std::string sha256;  ///< lower-case hex
  int part_count = 0;  ///< multipart only
  std::uint64_t part_size = 0;  ///< multipart only: every part but the last
};

/// How a completion went. On any error the upload is as it was: a client may re-upload a part or
/// the object and complete again.
struct finish_result {
  enum kind_t { done, nothing_uploaded, missing_parts, size_mismatch, checksum_mismatch } kind = done;
  object_info object;        ///< done: the stored object (store-computed size and SHA-256)
  std::vector<int> missing;  ///< missing_parts: which (ascending, at most 20 named)
  std::uint64_t size = 0;    ///< size_mismatch: the size the store holds
  std::string store_upload_id;  ///< non-empty: the upload now continues under this store id
};

class blob_backend {
public:
  virtual ~blob_backend() = default;
  /// A URL a client PUTs the whole object (`size` bytes) to, valid `seconds` from `now`. A store
  /// that can (the embedded one) refuses a body of another size.
  virtual std::string presign_put(const std::string& key, std::uint64_t size, std::int64_t now,
                                  std::int64_t seconds) const = 0;
  /// A URL a client PUTs part `number` (`size` bytes) of multipart upload `upload_id` to.
  virtual std::string presign_part(const std::string& key, const std::string& upload_id, int number, std::uint64_t size,
                                   std::int64_t now, std::int64_t seconds) const = 0;
  /// A URL a client GETs the object from, served as `content_type`.
  virtual std::string presign_get(const std::string& key, const std::string& content_type, std::int64_t now,
                                  std::int64_t seconds) const = 0;

  /// Starts a multipart upload of `key`; answers the store's upload id.
  virtual std::string create_multipart(const std::string& key, const std::string& content_type) = 0;
  /// The parts stored so far: (number, info), ascending; nullopt when the store cannot list them
  /// (an S3-compatible service without ListParts, such as s3rver).
  virtual std::optional<std::vector<std::pair<int, object_info>>> list_parts(const std::string& key,
                                                                             const std::string& upload_id) const = 0;
  /// Makes the object `key` of the parts 1..part_count of `upload_id` if and only if together
  /// they are `expect` (size and SHA-256 computed by the store, never taken from the client).
  /// When the store upload is gone but `key` holds the object (a completion that was cut off
  /// before it was recorded), that object is checked the same way.
  virtual finish_result complete_multipart(const std::string& key, const std::string& upload_id,
                                           const expected_object& expect) = 0;
  /// Checks the object a single PUT stored at `key` against `expect` (with an empty `expect.sha256`
  /// only its size: no read-back).
  virtual finish_result check_single(const std::string& key, const expected_object& expect) const = 0;
  /// Commits what a single PUT stored at `upload_key`: it becomes the object `version_key`, a key
  /// no upload URL names, if and only if it is `expect` (checked there, after the move or copy, so
  /// a PUT racing the completion cannot slip other bytes in). A committed version's bytes then
  /// never change, whatever the upload's URL is used for later. A store that can (the embedded
  /// one) also closes `upload_key` to new bodies until `closed_until`. When `version_key` already
  /// holds the object (a completion cut off before it was recorded), that object is checked.
  /// Equal keys (an upload started before versions had keys of their own) only check.
  virtual finish_result commit_single(const std::string& upload_key, const std::string& version_key,
                                      const expected_object& expect, std::int64_t closed_until) = 0;
  /// Releases an upload: its parts, or (`upload_id` empty) the object a single PUT stored, whose
  /// key a store that can closes to new bodies until `closed_until`.
  virtual void abort(const std::string& key, const std::string& upload_id, std::int64_t closed_until) = 0;
};

/// finish_result::store_upload_id: set when a refused multipart completion left the upload under
/// a new store upload id (an S3 service assembles before anyone can hash; see make_s3_backend).

/// What every store checks before assembling parts: parts 1..part_count all stored and their sizes
/// adding up to the declared size. Nullopt when they do; otherwise the finish to answer.
std::optional<finish_result> check_parts(const std::vector<std::pair<int, object_info>>& stored,
                                         const expected_object& expect);

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
