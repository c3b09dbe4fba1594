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
/// (mode 0600). Safe when `serve` and `token` race to create it. Throws std::runtime_error, also
/// when the key is one of `never_trusted` (the message says to delete it).
dev_identity load_or_create_dev_identity(const std::string& data_dir,
                                         const std::vector<std::string>& never_trusted = published_key_ids());
/// The same without creating it: nullopt when `<data_dir>/identity/` holds no key (`token` must
/// sign with the key the service trusts, never with a new one the service has never seen).
std::optional<dev_identity> load_dev_identity(const std::string& data_dir,
                                              const std::vector<std::string>& never_trusted = published_key_ids());
/// Where the development key of `data_dir` is kept.
std::string dev_key_path(const std::string& data_dir);

/// A random secret of 32 bytes kept in `<data_dir>/identity/<name>` (mode 0600), created once.
std::string load_or_create_secret(const std::string& data_dir, const std::string& name);

/// A random secret as text (43 characters of base64url: 256 bits) kept in
/// `<data_dir>/identity/<name>` (mode 0600), created once: for secrets an operator copies into
/// another program's configuration (the edge purge secret).
std::string load_or_create_text_secret(const std::string& data_dir, const std::string& name);

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

/// The codec of change-feed cursors and event ids of `data_dir`: its `feed-cursor.key` secret
/// (created once) and its log epoch.
std::shared_ptr<const domain::feed_cursor_codec> feed_codec(const std::string& data_dir);

}  // namespace cl::storage
