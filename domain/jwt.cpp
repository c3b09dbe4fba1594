#include "domain/jwt.hpp"

#include "domain/base64url.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/text.hpp"

#include <boost/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include <stdexcept>

namespace cl::domain {

namespace json = boost::json;

namespace {

std::shared_ptr<evp_pkey_st> own(EVP_PKEY* k) {
  return std::shared_ptr<evp_pkey_st>(k, EVP_PKEY_free);
}

struct bio_ptr {
  BIO* b;
  ~bio_ptr() { BIO_free(b); }
};

std::optional<std::string> bn_param(const EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) return std::nullopt;
  std::string out(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

std::shared_ptr<evp_pkey_st> rsa_public_from(std::string_view n, std::string_view e) {
  BIGNUM* bn_n = BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), static_cast<int>(n.size()), nullptr);
  BIGNUM* bn_e = BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), static_cast<int>(e.size()), nullptr);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr);
  EVP_PKEY* key = nullptr;
  OSSL_PARAM* params = nullptr;
  if (bn_n && bn_e && bld && ctx && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1
      && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1
      && (params = OSSL_PARAM_BLD_to_param(bld)) != nullptr && EVP_PKEY_fromdata_init(ctx) == 1) {
    if (EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = nullptr;
  }
  OSSL_PARAM_free(params);
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_BLD_free(bld);
  BN_free(bn_n);
  BN_free(bn_e);
  return key ? own(key) : nullptr;
}

bool verify_rs256(const EVP_PKEY* key, std::string_view input, std::string_view sig) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx) return false;
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, const_cast<EVP_PKEY*>(key)) == 1
            && EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                                reinterpret_cast<const unsigned char*>(input.data()), input.size())
                 == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}


std::optional<json::object> decode_json_object(std::string_view b64) {
  auto raw = base64url_decode(b64);
  if (!raw) return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(*raw, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

const json::string* string_claim(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  if (it == o.end() || !it->value().is_string()) return nullptr;
  return &it->value().as_string();
}

/// A NumericDate: an integral JSON number (RFC 7519 allows fractions; we accept integral values).
std::optional<std::int64_t> time_claim(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  if (it == o.end()) return std::nullopt;
  const auto& v = it->value();
  // Seconds since 1970 below 10^15 (some 30 million years): no sum or difference of two such
  // values can overflow, and a negative time is no time a token was issued at.
  constexpr std::int64_t limit = 1'000'000'000'000'000;
  if (v.is_int64() && v.as_int64() >= 0 && v.as_int64() < limit) return v.as_int64();
  if (v.is_uint64() && v.as_uint64() < static_cast<std::uint64_t>(limit)) return static_cast<std::int64_t>(v.as_uint64());
  if (v.is_double()) {  // 1.7e9 is a whole number of seconds; 1700000000.5 is not and is refused
    double d = v.as_double();
    if (d >= 0 && d < static_cast<double>(limit) && d == static_cast<double>(static_cast<std::int64_t>(d)))
      return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

bool has_prefix(const json::string& s, std::string_view prefix) {
  return std::string_view{s.data(), s.size()}.substr(0, prefix.size()) == prefix;
}

verify_outcome fail(error_id id, std::string message) {
  verify_outcome out;
  out.error = api_error{id, std::move(message), {}};
  return out;
}

}  // namespace

std::optional<key_set> key_set::parse(std::string_view jwks_json, std::string* error) {
  boost::system::error_code ec;
  json::value v = json::parse(jwks_json, ec);
  if (ec || !v.is_object()) {
    if (error) *error = "JWKS is not a JSON object";
    return std::nullopt;
  }
  auto* keys = v.as_object().if_contains("keys");
  if (!keys || !keys->is_array()) {
    if (error) *error = "JWKS has no \"keys\" array";
    return std::nullopt;
  }
  key_set out;
  for (const auto& k : keys->as_array()) {
    if (!k.is_object()) continue;
    const auto& o = k.as_object();
    auto* kty = string_claim(o, "kty");
    auto* kid = string_claim(o, "kid");
    auto* n = string_claim(o, "n");
    auto* e = string_claim(o, "e");
    auto* alg = string_claim(o, "alg");
    auto* use = string_claim(o, "use");
    if (!kty || *kty != "RSA" || !kid || kid->empty() || !n || !e) continue;
    if (alg && *alg != "RS256") continue;
    if (use && *use != "sig") continue;
    auto nb = base64url_decode(*n);
    auto eb = base64url_decode(*e);
    if (!nb || !eb || nb->size() < 256) continue;  // 2048-bit minimum
    if (auto key = rsa_public_from(*nb, *eb))
      out.keys_.emplace(std::string{kid->data(), kid->size()}, std::move(key));
  }
  return out;
}

const evp_pkey_st* key_set::find(std::string_view kid) const {
  auto it = keys_.find(kid);
  return it == keys_.end() ? nullptr : it->second.get();
}

namespace {

/// A compact JWS cut at its two dots.
struct compact_jws {
  std::string_view header, payload, signature;
  std::string_view signed_part;  ///< header.payload, what the signature covers
};

std::optional<compact_jws> split_compact(std::string_view token) {
  auto dot1 = token.find('.');
  auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) return std::nullopt;
  return compact_jws{token.substr(0, dot1), token.substr(dot1 + 1, dot2 - dot1 - 1), token.substr(dot2 + 1),
                     token.substr(0, dot2)};
}

/// The header (RS256, JWT, no crit, a known kid) and the signature; nullopt when both hold.
std::optional<verify_outcome> check_signature(const compact_jws& jws, const key_set& keys) {
  auto header = decode_json_object(jws.header);
  if (!header) return fail(error_id::token_invalid, "The token header is not base64url JSON.");
  auto* alg = string_claim(*header, "alg");
  if (!alg || *alg != "RS256") return fail(error_id::token_invalid, "The token is not signed with RS256.");
  if (auto* typ = header->if_contains("typ"); typ && !(typ->is_string() && typ->as_string() == "JWT"))
    return fail(error_id::token_invalid, "The token type is not JWT.");
  if (header->contains("crit")) return fail(error_id::token_invalid, "The token has critical header parameters.");
  auto* kid = string_claim(*header, "kid");
  if (!kid || kid->empty() || kid->size() > 256)
    return fail(error_id::token_invalid, "The token header has no usable kid.");
  const auto* key = keys.find(std::string_view{kid->data(), kid->size()});
  if (!key) {
    auto out = fail(error_id::token_invalid, "The token was signed by an unknown key.");
    out.unknown_kid = true;
    return out;
  }
  auto sig = base64url_decode(jws.signature);
  if (!sig || !verify_rs256(key, jws.signed_part, *sig))
    return fail(error_id::token_invalid, "The token signature does not verify.");
  return std::nullopt;
}

/// An identity claim (`sub`, `client_id`, `tenant_id`, `jti`, a scope) is a key the stores keep
/// and compare: a control character (U+0000 above all, which some stores end a string at) or
/// more than `max_identity_claim_bytes` is refused, never cut or rewritten (docs/api.md "Tokens").
std::optional<verify_outcome> check_identity_claim(const char* name, const json::string& value) {
  std::string_view v{value.data(), value.size()};
  if (v.size() > max_identity_claim_bytes)
    return fail(error_id::token_invalid, std::string{"The token's "} + name + " claim is longer than "
                                           + std::to_string(max_identity_claim_bytes) + " bytes.");
  if (has_control_character(v))
    return fail(error_id::token_invalid, std::string{"The token's "} + name + " claim holds a control character.");
  return std::nullopt;
}

/// Who the token speaks for: iss, sub, client_id, jti and scopes, into `who`.
std::optional<verify_outcome> read_identity(const json::object& claims, const verify_options& opts, principal& who) {
  auto* iss = string_claim(claims, "iss");
  if (!iss || *iss != opts.issuer) return fail(error_id::token_invalid, "The token was issued by an untrusted issuer.");
  auto* sub = string_claim(claims, "sub");
  if (!sub || sub->size() < 3 || !(has_prefix(*sub, "u_") || has_prefix(*sub, "a_")))
    return fail(error_id::token_invalid, "The token subject is not a u_ or a_ principal.");
  if (auto bad = check_identity_claim("sub", *sub)) return bad;
  auto* client_id = string_claim(claims, "client_id");
  if (!client_id || client_id->size() < 3 || !has_prefix(*client_id, "a_"))
    return fail(error_id::token_invalid, "The token has no a_ client_id.");
  if (auto bad = check_identity_claim("client_id", *client_id)) return bad;
  if (has_prefix(*sub, "a_") && *sub != *client_id)
    return fail(error_id::token_invalid, "An application token must have sub equal to client_id.");
  auto* jti = string_claim(claims, "jti");
  if (!jti || jti->empty()) return fail(error_id::token_invalid, "The token has no jti.");
  if (auto bad = check_identity_claim("jti", *jti)) return bad;
  auto scopes_it = claims.find("scopes");
  if (scopes_it == claims.end() || !scopes_it->value().is_array())
    return fail(error_id::token_invalid, "The token's scopes claim is not an array.");
  std::vector<std::string> scopes;
  for (const auto& s : scopes_it->value().as_array()) {
    if (!s.is_string()) return fail(error_id::token_invalid, "The token's scopes are not all strings.");
    if (auto bad = check_identity_claim("scopes", s.as_string())) return bad;
    scopes.emplace_back(s.as_string().data(), s.as_string().size());
  }
  who.subject.assign(sub->data(), sub->size());
  who.client_id.assign(client_id->data(), client_id->size());
  who.issuer.assign(iss->data(), iss->size());
  who.token_id.assign(jti->data(), jti->size());
  who.scopes = std::move(scopes);
  return std::nullopt;
}

/// exp, iat, auth_time and nbf: whole numbers, a lifetime of at most max_lifetime, valid now.
std::optional<verify_outcome> check_times(const json::object& claims, const verify_options& opts, principal& who) {
  auto exp = time_claim(claims, "exp");
  auto iat = time_claim(claims, "iat");
  if (!exp || !iat) return fail(error_id::token_invalid, "The token lacks exp or iat as whole, non-negative seconds.");
  if (*iat > opts.now + opts.clock_skew) return fail(error_id::token_invalid, "The token was issued in the future.");
  if (*exp - *iat > opts.max_lifetime || *exp <= *iat)
    return fail(error_id::token_invalid, "The token lifetime is over one hour or not positive.");
  if (claims.contains("auth_time")) {
    who.auth_time = time_claim(claims, "auth_time");
    if (!who.auth_time) return fail(error_id::token_invalid, "The token's auth_time is not a whole number of seconds.");
    if (*who.auth_time > opts.now + opts.clock_skew)
      return fail(error_id::token_invalid, "The token's auth_time (last sign-in) is in the future.");
  }
  if (claims.contains("nbf")) {
    auto nbf = time_claim(claims, "nbf");
    if (!nbf) return fail(error_id::token_invalid, "The token's nbf is not a whole number of seconds.");
    if (*nbf > opts.now + opts.clock_skew) return fail(error_id::token_invalid, "The token is not valid yet (nbf).");
  }
  if (*exp + opts.clock_skew <= opts.now) return fail(error_id::token_expired, "The token has expired.");
  who.issued_at = *iat;
  who.expires_at = *exp;
  return std::nullopt;
}

}  // namespace

verify_outcome verify_token(std::string_view token, const key_set& keys, const verify_options& opts) {
  if (token.empty()) return fail(error_id::token_missing, "The bearer token is empty.");
  if (token.size() > opts.max_token_bytes)
    return fail(error_id::token_invalid, "The token is longer than " + std::to_string(opts.max_token_bytes) + " bytes.");
  auto jws = split_compact(token);
  if (!jws) return fail(error_id::token_invalid, "The token is not a compact JWS of three parts.");
  if (auto failed = check_signature(*jws, keys)) return *failed;
  auto claims = decode_json_object(jws->payload);
  if (!claims) return fail(error_id::token_invalid, "The token payload is not base64url JSON.");
  verify_outcome out;
  if (auto failed = read_identity(*claims, opts, out.who)) return *failed;
  if (auto failed = check_times(*claims, opts, out.who)) return *failed;
  auto* tenant = string_claim(*claims, "tenant_id");
  if (!tenant || tenant->empty()) return fail(error_id::tenant_mismatch, "The token names no tenant.");
  if (auto bad = check_identity_claim("tenant_id", *tenant)) return *bad;
  out.who.tenant_id.assign(tenant->data(), tenant->size());
  out.ok = true;
  return out;
}

private_key private_key::generate_rsa(int bits) {
  EVP_PKEY* key = EVP_RSA_gen(static_cast<unsigned>(bits));
  if (!key) throw std::runtime_error("RSA key generation failed");
  return private_key{own(key)};
}

std::optional<private_key> private_key::from_pem(std::string_view pem) {
  bio_ptr bio{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))};
  if (!bio.b) return std::nullopt;
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.b, nullptr, nullptr, nullptr);
  if (!key) return std::nullopt;
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
    EVP_PKEY_free(key);
    return std::nullopt;
  }
  return private_key{own(key)};
}

std::string private_key::to_pem() const {
  bio_ptr bio{BIO_new(BIO_s_mem())};
  if (!bio.b || PEM_write_bio_PrivateKey(bio.b, key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    throw std::runtime_error("cannot serialise private key");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.b, &data);
  return std::string(data, static_cast<std::size_t>(len));
}

std::string private_key::thumbprint() const {
  auto n = bn_param(key_.get(), OSSL_PKEY_PARAM_RSA_N);
  auto e = bn_param(key_.get(), OSSL_PKEY_PARAM_RSA_E);
  if (!n || !e) throw std::runtime_error("not an RSA key");
  // RFC 7638: members in lexicographic order, no whitespace.
  std::string canonical = R"({"e":")" + base64url_encode(*e) + R"(","kty":"RSA","n":")"
                          + base64url_encode(*n) + R"("})";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(canonical.data()), canonical.size(), digest);
  return base64url_encode(std::string_view{reinterpret_cast<const char*>(digest), sizeof digest});
}

std::string private_key::jwks_json(std::string_view kid) const {
  auto n = bn_param(key_.get(), OSSL_PKEY_PARAM_RSA_N);
  auto e = bn_param(key_.get(), OSSL_PKEY_PARAM_RSA_E);
  if (!n || !e) throw std::runtime_error("not an RSA key");
  std::string out = R"({"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":)";
  append_json_string(out, kid);
  out += R"(,"n":")" + base64url_encode(*n) + R"(","e":")" + base64url_encode(*e) + "\"}]}";
  return out;
}

std::string private_key::sign_rs256(std::string_view input) const {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::size_t len = 0;
  std::string sig;
  bool ok = ctx && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key_.get()) == 1
            && EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                              input.size())
                 == 1;
  if (ok) {
    sig.resize(len);
    ok = EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                        reinterpret_cast<const unsigned char*>(input.data()), input.size())
         == 1;
    sig.resize(len);
  }
  EVP_MD_CTX_free(ctx);
  if (!ok) throw std::runtime_error("RS256 signing failed");
  return sig;
}

std::string sign_compact(std::string_view header_json, std::string_view payload_json,
                         const private_key& key) {
  std::string input = base64url_encode(header_json) + "." + base64url_encode(payload_json);
  auto sig = key.sign_rs256(input);
  return input + "." + base64url_encode(sig);
}

std::string issue_token(const private_key& key, const token_request& req) {
  bool user = req.subject.rfind("u_", 0) == 0 && req.subject.size() > 2;
  bool app = req.subject.rfind("a_", 0) == 0 && req.subject.size() > 2;
  if (!user && !app) throw std::invalid_argument("subject must start with u_ or a_");
  std::string client_id = req.client_id.empty() && app ? req.subject : req.client_id;
  if (client_id.rfind("a_", 0) != 0 || client_id.size() < 3)
    throw std::invalid_argument("client_id must be an a_ application (required for u_ subjects)");
  if (app && client_id != req.subject)
    throw std::invalid_argument("for an a_ subject, client_id must equal the subject");
  if (req.tenant_id.empty()) throw std::invalid_argument("tenant must not be empty");
  const std::pair<const char*, const std::string*> identity[] = {
    {"subject", &req.subject}, {"client_id", &client_id}, {"tenant", &req.tenant_id}};
  for (const auto& [name, value] : identity)
    if (value->size() > max_identity_claim_bytes || has_control_character(*value) || !valid_utf8(*value))
      throw std::invalid_argument(std::string{name} + " must be UTF-8 of at most "
                                  + std::to_string(max_identity_claim_bytes) + " bytes without control characters");
  if (req.ttl <= 0 || req.ttl > 3600) throw std::invalid_argument("ttl must be 1..3600 seconds");

  json::object header{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", req.kid}};
  json::array scopes;
  for (const auto& s : req.scopes) scopes.emplace_back(s);
  json::object claims{{"iss", req.issuer},       {"sub", req.subject},
                      {"tenant_id", req.tenant_id}, {"scopes", std::move(scopes)},
                      {"client_id", client_id},  {"iat", req.now},
                      {"exp", req.now + req.ttl}, {"jti", random_id("jti_")}};
  if (user) claims["auth_time"] = req.now;
  return sign_compact(json::serialize(header), json::serialize(claims), key);
}

}  // namespace cl::domain
