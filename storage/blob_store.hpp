#pragma once
/// The blob store (issue 13, spec 4.4 and state table 3.2): uploads in progress and the immutable
/// versions of blobs, with an index of uploads by expiry (the broker's sweep aborts abandoned
/// ones). The bytes are in the object store; these are the records about them. It owns its key
/// layouts and encoding.
///
/// SQL mapping: `blob_uploads(tenant, id, blob_id, uploader, client_id, method, store_upload_id,
/// object_key, content_type, size, part_size, expires_at, state, version)` keyed (tenant, id) with an
/// index on expires_at WHERE state = 'IN_PROGRESS'; `blob_versions(tenant, blob_id, version, size,
/// content_type, sha256, created, uploader, object_key)` keyed (tenant, blob_id, version);
/// `latest` = `ORDER BY version DESC LIMIT 1` (LMDB: keys newest first, one read); `expired` = `WHERE state = 'IN_PROGRESS' AND
/// expires_at < $now ORDER BY expires_at LIMIT $n`.

#include "storage/record_store.hpp"
#include "storage/copyable.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::storage {

/// An upload: created by POST /blobs/uploads, ended by completion or abort (or the sweep).
struct upload_record {
  std::string tenant;
  std::string id;               ///< upl_
  std::string blob_id;          ///< blb_: a new blob, or a new version of an existing one
  std::string uploader;         ///< the token's `sub`
  std::string client_id;
  std::string method;           ///< SINGLE or MULTIPART
  std::string store_upload_id;  ///< the object store's multipart upload id (MULTIPART)
  std::string object_key;       ///< where the bytes go: <tenant>/<blob>/<upload id>
  std::string content_type;
  std::uint64_t size = 0;       ///< declared
  std::uint64_t part_size = 0;  ///< MULTIPART
  std::int64_t expires_at = 0;  ///< Unix seconds: the URLs' end; the sweep aborts it after
  std::string state = "IN_PROGRESS";  ///< IN_PROGRESS, COMPLETED, ABORTED
  std::int64_t version = 0;     ///< the blob version it became (COMPLETED)
  bool operator==(const upload_record&) const;
};

/// An immutable blob version.
struct blob_version {
  std::string tenant;
  std::string blob_id;
  std::int64_t version = 0;  ///< 1, 2, ... in completion order
  std::uint64_t size = 0;
  std::string content_type;
  std::string sha256;        ///< hex, computed by the store
  std::string created;       ///< RFC 3339
  std::string uploader;      ///< the `sub` that completed the upload
  std::string object_key;
  bool operator==(const blob_version&) const;
};

class blob_writes;

class blob_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = blob_writes;
  virtual std::optional<upload_record> upload(std::string_view tenant, std::string_view id) const = 0;
  /// Version `version` of a blob, or its latest when `version` is 0.
  virtual std::optional<blob_version> version(std::string_view tenant, std::string_view blob_id,
                                              std::int64_t version) const = 0;
  /// Uploads still in progress whose `expires_at` is before `now`, soonest first, at most `limit`.
  virtual std::vector<upload_record> expired_uploads(std::int64_t now, std::size_t limit) const = 0;
};

class blob_writes : public blob_reads {
public:
  /// Stores an upload (create or state change); the expiry index follows its state.
  virtual void put_upload(const upload_record& u) = 0;
  /// Adds a version; its number must be the latest + 1 (the caller reads `version(..., 0)` in the
  /// same transaction).
  virtual void add_version(const blob_version& v) = 0;
};

/// The blob store of a view or a transaction (the blobs group's store: the core views do not name it).
inline const blob_reads& blobs(const read_view& view) { return view.store<blob_reads>(); }
inline blob_writes& blobs(write_txn& tx) { return tx.store<blob_writes>(); }

}  // namespace cl::storage
