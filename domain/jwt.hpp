#pragma once
/// JSON Web Tokens as spec section 5 defines them: RS256 only, verified against a JWKS.
/// OpenSSL does the cryptography; nothing here logs or echoes a token.

#include "domain/errors.hpp"
#include "domain/principal.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace cl::domain {

/// A JSON Web Key Set reduced to the RSA signing keys it holds (at least 2048 bits), by `kid`.
class key_set {
public:
  /// Parses JWKS JSON. Keys that are not RSA or too small are skipped; a document that is not
  /// a JWKS at all yields nullopt and sets `error`.
  static std::optional<key_set> parse(std::string_view jwks_json, std::string* error);

  /// The key with this `kid`, or nullptr.
  const evp_pkey_st* find(std::string_view kid) const;

  std::size_t size() const { return keys_.size(); }

  /// Adds `other`'s keys; on a `kid` present in both, `other`'s key wins.
  void merge(const key_set& other) {
    for (const auto& [kid, key] : other.keys_) keys_[kid] = key;
  }

private:
  std::map<std::string, std::shared_ptr<evp_pkey_st>, std::less<>> keys_;
};

/// The longest `sub`, `client_id`, `tenant_id`, `jti` or scope a token may carry (bytes).
inline constexpr std::size_t max_identity_claim_bytes = 255;

/// The checks that are configuration rather than spec.
struct verify_options {
  std::string issuer;                  ///< `iss` must equal this
  std::int64_t now = 0;                ///< Unix seconds
  std::int64_t clock_skew = 60;        ///< tolerance for `exp` and `iat`
  std::int64_t max_lifetime = 3600;    ///< `exp - iat` at most this
  std::size_t max_token_bytes = 8192;  ///< longer tokens are refused unread
};

/// Result of verifying one token.
struct verify_outcome {
  bool ok = false;
  principal who;         ///< valid when ok
  api_error error;       ///< valid when !ok; never contains the token
  bool unknown_kid = false;  ///< the failure was a `kid` missing from the key set
};

/// Verifies a compact JWS per spec 5 and RFC 8725: RS256 only, `kid` known, signature, issuer,
/// time claims, lifetime, principal shape, scopes; a token without `tenant_id` -> TENANT_MISMATCH.
/// An identity claim with a control character or over `max_identity_claim_bytes` is TOKEN_INVALID.
verify_outcome verify_token(std::string_view token, const key_set& keys, const verify_options& opts);

/// An RSA private key, for the development identity and for tests.
class private_key {
public:
  /// A fresh RSA key of `bits` bits.
  static private_key generate_rsa(int bits);

  /// Reads a PEM private key; nullopt when it is not one.
  static std::optional<private_key> from_pem(std::string_view pem);

  std::string to_pem() const;

  /// RFC 7638 thumbprint of the public key, base64url: a stable `kid`.
  std::string thumbprint() const;

  /// `{"keys":[{...public JWK...}]}` with this `kid`, `alg` RS256, `use` sig.
  std::string jwks_json(std::string_view kid) const;

  /// RSASSA-PKCS1-v1_5 with SHA-256 over `input`.
  std::string sign_rs256(std::string_view input) const;

private:
  explicit private_key(std::shared_ptr<evp_pkey_st> key) : key_(std::move(key)) {}
  std::shared_ptr<evp_pkey_st> key_;
};

/// Builds `b64(header).b64(payload).b64(RS256 signature)` from raw JSON texts (tests craft
/// hostile tokens with it).
std::string sign_compact(std::string_view header_json, std::string_view payload_json,
                         const private_key& key);

/// What `contentlake token` asks for.
struct token_request {
  std::string issuer;
  std::string kid;
  std::string subject;
  std::string tenant_id;
  std::string client_id;  ///< for `a_` subjects defaults to the subject
  std::vector<std::string> scopes;
  std::int64_t now = 0;
  std::int64_t ttl = 3600;
};

/// Issues a token with every claim of spec 5.2 (`auth_time` only for `u_` subjects).
/// Throws std::invalid_argument when the request breaks the spec's rules.
std::string issue_token(const private_key& key, const token_request& req);

}  // namespace cl::domain
