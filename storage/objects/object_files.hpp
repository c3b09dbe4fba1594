#pragma once
/// The embedded object store's files: objects and multipart uploads under `<data dir>/blobs`.
/// Bodies stream into a temporary directory while their SHA-256 is computed (and their MD5 when a
/// client declared one to check), are fsynced, and appear by one atomic rename: a crash never
/// leaves a half object visible. No HTTP here; the S3 listener (issue 13) calls this, off the I/O
/// threads.
///
/// Layout: `objects/<hh>/<sha256(bucket/key)>/{data,meta}`, `uploads/<upload id>/{meta,<part>,
/// <part>.meta}`, `closed/<sha256(bucket/key)>` (a closed key's time), `tmp/` (emptied at open).
/// Names are hashes, so a key never becomes a path.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::storage {

/// Whether `e` (thrown by this store) says the disk is full: no space, quota, or file size limit.
bool disk_full(const std::exception& e);

/// What is known about a stored object or part.
struct object_info {
  std::string bucket, key;
  std::uint64_t size = 0;
  std::string sha256;        ///< lower-case hex of the whole body
  /// Opaque, as S3's: the first 32 hex digits of the SHA-256 (an MD5's length, not an MD5: S3's
  /// own multipart and encrypted objects have ETags that are not their MD5 either), or after a
  /// multipart completion the MD5 of the parts' ETags + "-N". Objects stored before 2026-12 keep
  /// the MD5 they were given.
  std::string etag;
  std::string content_type;
  std::int64_t modified = 0;  ///< Unix seconds
};

/// Why a multipart completion was refused (S3's error codes).
enum class complete_error { none, no_such_upload, invalid_part, invalid_part_order, entity_too_small, checksum_mismatch };

class object_files {
public:
  /// Opens (creating) the store under `root`; leftovers of interrupted writes are removed unless
  /// `remove_leftovers` is false (a second view of a store another instance serves: the blob
  /// broker's beside the embedded listener's, which may be receiving).
  explicit object_files(std::filesystem::path root, bool remove_leftovers = true);

  /// Bytes of a body are written at offsets that are multiples of this (a whole chunk but the last):
  /// with `direct_alignment`-aligned memory they go from it to the disk without a copy.
  static constexpr std::size_t direct_alignment = 4096;

  /// A body being received: bytes are appended as they arrive; nothing is visible until commit.
  class incoming {
  public:
    virtual ~incoming() = default;
    /// Appends bytes (written to the temporary file at once; memory stays flat).
    void append(std::string_view bytes) {
      write(bytes);
      add_to_sha256(bytes);
    }
    /// The stages of `append`, which may run on threads of their own at once (each in the order
    /// of the bytes): the write, the SHA-256, and the MD5 (only when it is asked for: `md5`).
    /// A write of whole `direct_alignment` blocks from memory aligned to it, at an offset aligned
    /// to it, goes to the disk without passing through the page cache (made durable as it goes
    /// when `receive` was asked to); the first that is not (a body's tail) and every one after it
    /// go through the page cache; `commit_*` syncs both.
    virtual void write(std::string_view bytes) = 0;
    virtual void add_to_sha256(std::string_view bytes) = 0;
    virtual void add_to_md5(std::string_view bytes) = 0;
    virtual std::uint64_t size() const = 0;
    /// Hex SHA-256 and MD5 of what was added so far (final once nothing more is added).
    virtual std::string sha256() const = 0;
    virtual std::string md5() const = 0;
  };

  /// Starts receiving a body; drop it to abandon (its temporary files go). With `flush_every`,
  /// direct writes are made durable (fdatasync) every that many bytes as they go rather than all
  /// at the commit: for a body whose digests take longer than its writes (the listener's), the
  /// disk's flush then runs beside them, not after the last byte (docs/architecture.md).
  std::unique_ptr<incoming> receive(std::uint64_t flush_every = 0);

  /// Makes `body` the object `bucket/key` (replacing any), durably; answers its info. The body
  /// must come from `receive` and is used up. A replaced object's bytes are set aside (gone at
  /// once for readers) and removed by `empty_trash`, so the caller can answer first.
  object_info commit_object(std::shared_ptr<incoming> body, const std::string& bucket, const std::string& key,
                            const std::string& content_type);

  /// Copies every object (bytes and info, its time and ETag kept) and the closed keys into
  /// `target`, for a backup taken while this store serves: each copy is checked against the
  /// SHA-256 its info names and taken again if the object was replaced meanwhile; an object
  /// removed meanwhile is left out. Uploads in progress are not copied.
  struct copy_summary {
    std::uint64_t objects = 0, bytes = 0;
  };
  copy_summary copy_objects_to(object_files& target) const;

  /// The object's info, if it exists.
  std::optional<object_info> stat(const std::string& bucket, const std::string& key) const;
  /// The path of the object's bytes (for ranged reads by the listener), if it exists.
  std::optional<std::filesystem::path> data_path(const std::string& bucket, const std::string& key) const;
  /// Removes the object; false when there was none.
  bool remove(const std::string& bucket, const std::string& key);
  /// Moves the object `from` to `to` (replacing any there) in one rename, durably; false when
  /// `from` holds none.
  bool move(const std::string& bucket, const std::string& from, const std::string& to);

  /// Closes `bucket/key` to new bodies until `until` (Unix seconds): `closed` then answers true and
  /// the listener refuses a PUT of it. An upload's URL names such a key after the upload was
  /// completed or aborted. Markers whose time has passed go when the store opens.
  void close_key(const std::string& bucket, const std::string& key, std::int64_t until);
  /// Opens a closed key again (a completion refused after it had closed the key).
  void reopen_key(const std::string& bucket, const std::string& key);
  /// Whether `bucket/key` is closed to new bodies now.
  bool closed(const std::string& bucket, const std::string& key) const;

  /// Starts a multipart upload of `bucket/key`; answers its id.
  std::string create_upload(const std::string& bucket, const std::string& key, const std::string& content_type);
  /// The upload's target, if it exists.
  std::optional<object_info> upload(const std::string& upload_id) const;
  /// Stores `body` as part `number` (1..10000) of the upload, replacing an earlier one (set aside
  /// as by commit_object); nullopt when the upload does not exist.
  std::optional<object_info> commit_part(std::shared_ptr<incoming> body, const std::string& upload_id, int number);
  /// The parts stored so far, by number: (number, info).
  std::vector<std::pair<int, object_info>> parts(const std::string& upload_id) const;
  /// Assembles the listed parts (numbers ascending, each's ETag as returned by commit_part) into
  /// the object, durably; every part but the last must be at least `min_part_size`. The upload
  /// goes when it succeeds. With `expected_sha256`, the assembled bytes must have that SHA-256
  /// (hex): otherwise `checksum_mismatch`, and nothing changes (the upload and its parts stay).
  complete_error complete_upload(const std::string& upload_id, const std::vector<std::pair<int, std::string>>& parts,
                                 std::uint64_t min_part_size, object_info& out,
                                 const std::string& expected_sha256 = {});
  /// Drops the upload and its parts; false when there was none.
  bool abort_upload(const std::string& upload_id);

  /// Removes what commit_object and commit_part set aside (left for the store's next opening when
  /// never called).
  void empty_trash();

  /// Whether `key` is acceptable as an object key: 1..1024 bytes, no NUL or control character,
  /// no empty, `.` or `..` segment (the store refuses path traversal even though names are hashed).
  static bool valid_key(std::string_view key);

private:
  std::filesystem::path object_dir(const std::string& bucket, const std::string& key) const;
  std::filesystem::path closed_marker(const std::string& bucket, const std::string& key) const;
  std::filesystem::path fresh_tmp();
  void set_aside(const std::filesystem::path& trash);

  std::filesystem::path root_;
  std::mutex trash_mutex_;
  std::vector<std::filesystem::path> trash_;
};

}  // namespace cl::storage
