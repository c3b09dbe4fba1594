#pragma once
/// The development identity in the data dir (signing key, secrets).

#include "config/watched_file.hpp"
#include "domain/change_cursor.hpp"
#include "domain/jwt.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cl::storage {

/// Issuer of development tokens (`iss`); only trusted when no `auth.issuer` is configured.
inline constexpr const char* dev_issuer = "https://dev-issuer.contentlake.invalid";

/// Where a node keeps its secrets: each in `<data_dir>/identity/<name>`, created once (one node),
/// or, when `file` is set (`secrets.file`), all in that file, made once by `write_secrets_file`
/// and read by every node of a cluster (never created or changed by a node).
struct secret_place {
  secret_place(std::string data_dir_, std::string file_ = {})  // NOLINT: a data dir alone is a place
      : data_dir(std::move(data_dir_)), file(std::move(file_)) {}
  secret_place(const char* data_dir_) : data_dir(data_dir_) {}  // NOLINT
  std::string data_dir;
  std::string file;
};

/// The names `write_secrets_file` writes: every secret a node reads through a `secret_place`.
const std::vector<std::string>& shared_secret_names();

/// Writes a new secrets file at `path` (mode 0600) holding a new random value for each of
/// `shared_secret_names()`. Throws std::runtime_error when `path` exists (never overwritten: the
/// nodes reading it would refuse every token sealed before) or cannot be written.
void write_secrets_file(const std::string& path);

/// A fingerprint of the keys that seal what one node hands out and another opens (page tokens,
/// feed cursors, webhook secrets) of `place`: 16 hex digits of an HMAC, which tells whether two
/// nodes share them and nothing of the keys. Creates them in the data dir if missing, as a start does.
std::string secrets_fingerprint(const secret_place& place);

/// The development signing key and what verifiers need of it.
struct dev_identity {
  domain::private_key key;
  std::string kid;
  std::string jwks_json;
};

/// `kid`s (RFC 7638 thumbprints) of private keys that were ever published, e.g. committed to the
/// repository: never trusted, not even for development.
const std::vector<std::string>& published_key_ids();

/// Loads the development key from `<data_dir>/identity/`, creating an RSA-2048 key there once
/// (mode 0600), or from the secrets file when `place` names one. Safe when `serve` and `token` race
/// to create it. Throws std::runtime_error, also when the key is one of `never_trusted` (the message
/// says to delete it) or the secrets file lacks it.
dev_identity load_or_create_dev_identity(const secret_place& place,
                                         const std::vector<std::string>& never_trusted = published_key_ids());
/// The same without creating it: nullopt when `<data_dir>/identity/` holds no key (`token` must
/// sign with the key the service trusts, never with a new one the service has never seen); with a
/// secrets file, its key (it throws when the file lacks one).
std::optional<dev_identity> load_dev_identity(const secret_place& place,
                                              const std::vector<std::string>& never_trusted = published_key_ids());
/// Where the development key of `data_dir` is kept.
std::string dev_key_path(const std::string& data_dir);

/// A random secret of 32 bytes kept in `<data_dir>/identity/<name>` (mode 0600), created once.
/// From the secrets file instead when `place` names one (throws when it lacks `name`).
std::string load_or_create_secret(const secret_place& place, const std::string& name);

/// A random secret as text (43 characters of base64url: 256 bits) kept in
/// `<data_dir>/identity/<name>` (mode 0600), created once: for secrets an operator copies into
/// another program's configuration (the edge purge secret).
std::string load_or_create_text_secret(const secret_place& place, const std::string& name);

/// The embedded object store's S3 credentials when none are configured: created once in
/// `<data_dir>/identity/blobs-access-key-id` and `.../blobs-secret-access-key` (mode 0600).
struct s3_credentials {
  std::string access_key_id;      ///< CL + 18 upper-case letters and digits
  std::string secret_access_key;  ///< 40 characters
};
s3_credentials load_or_create_s3_credentials(const std::string& data_dir);

/// The change log's epoch, `<data_dir>/identity/log-epoch`: empty for a data dir never restored
/// from a backup; `contentlake restore` writes a new one (`new_log_epoch`).
std::string log_epoch(const std::string& data_dir);
/// Replaces the epoch with a new random one and answers it.
std::string new_log_epoch(const std::string& data_dir);

/// The codec of change-feed cursors, positions and event ids: the `feed-cursor.key` secret of
/// `place`, the log epoch of its data dir, and `deployment` (`record_store::deployment_id`: cursors
/// and positions of another deployment with the same secrets do not open).
std::shared_ptr<const domain::feed_cursor_codec> feed_codec(const secret_place& place, const std::string& deployment);

}  // namespace cl::storage
