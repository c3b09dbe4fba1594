#pragma once
/// Where signing keys come from: the development identity in the data dir, a JWKS file, or a
/// JWKS fetched over HTTPS.

#include "domain/jwt.hpp"

#include <chrono>
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

/// A random secret of 32 bytes kept in `<data_dir>/identity/<name>` (mode 0600), created once.
std::string load_or_create_secret(const std::string& data_dir, const std::string& name);

/// Reads a whole file; nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

/// Modification time of `path` in nanoseconds plus its size, to notice changes; 0 if missing.
long long file_signature(const std::string& path);

/// A configuration file read again whenever it changes (by `file_signature`).
class watched_file {
public:
  explicit watched_file(std::string path = {}) : path_(std::move(path)) {}

  struct change {
    bool changed = false;             ///< false: as at the last poll (or no path)
    std::optional<std::string> text;  ///< when changed: the new text, or none if unreadable
  };
  /// The first poll always reports a change (the file as found at start).
  change poll() {
    if (path_.empty()) return {};
    auto sig = file_signature(path_);
    if (polled_ && sig == signature_) return {};
    polled_ = true;
    signature_ = sig;
    return {true, read_file(path_)};
  }
  const std::string& path() const { return path_; }

private:
  std::string path_;
  long long signature_ = 0;
  bool polled_ = false;
};

/// GET `url` (https only) with TLS verification against the system CAs plus `extra_ca_file`.
/// Returns the body of a 200 answer; throws std::runtime_error (no secrets in the message).
std::string fetch_https(const std::string& url, const std::string& extra_ca_file,
                        std::chrono::milliseconds timeout, std::size_t max_bytes = 1 << 20);

}  // namespace cl::storage
