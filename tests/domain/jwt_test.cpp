// Token verification (spec 5) and the RFC 8725 attacks that apply to an RS256-only verifier.

#include "domain/base64url.hpp"
#include "domain/jwt.hpp"
#include "tests/support/test_keys.hpp"

#include <catch2/catch.hpp>
#include <openssl/hmac.h>

using namespace cl::domain;
using namespace cl::testing;
namespace json = boost::json;

namespace {

const key_set& trusted() {
  static const key_set keys = *key_set::parse(test_key().jwks_json(test_kid()), nullptr);
  return keys;
}

verify_options options() {
  verify_options o;
  o.issuer = test_issuer;
  o.now = unix_now();
  return o;
}

verify_outcome check(const std::string& token) {
  return verify_token(token, trusted(), options());
}

error_id failure_of(const std::string& token) {
  auto out = check(token);
  REQUIRE_FALSE(out.ok);
  return out.error.id;
}

std::string unsigned_token(const json::object& header, const json::object& claims, std::string sig = "") {
  return base64url_encode(json::serialize(header)) + "." + base64url_encode(json::serialize(claims)) + "." + sig;
}

}  // namespace

TEST_CASE("a valid RS256 token yields its principal", "[jwt]") {
  auto out = check(make_token(valid_claims("u_alice")));
  REQUIRE(out.ok);
  CHECK(out.who.subject == "u_alice");
  CHECK(out.who.tenant_id == "t_test");
  CHECK(out.who.client_id == "a_testapp");
  CHECK(out.who.has_scope("content-lake.read"));
  CHECK_FALSE(out.who.has_scope("content-lake.write"));
  CHECK(out.who.auth_time.has_value());
  CHECK(out.who.is_user());
}

TEST_CASE("an application token has sub equal to client_id", "[jwt]") {
  auto out = check(make_token(valid_claims("a_service")));
  REQUIRE(out.ok);
  CHECK(out.who.client_id == "a_service");
  CHECK_FALSE(out.who.is_user());
  auto c = valid_claims("a_service");
  c["client_id"] = "a_other";
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
}

TEST_CASE("RFC 8725: alg none is refused", "[jwt][attack]") {
  auto h = valid_header();
  h["alg"] = "none";
  CHECK(failure_of(unsigned_token(h, valid_claims())) == error_id::token_invalid);
  h["alg"] = "None";
  CHECK(failure_of(unsigned_token(h, valid_claims())) == error_id::token_invalid);
}

TEST_CASE("RFC 8725: RS256 -> HS256 with the public key as HMAC secret is refused", "[jwt][attack]") {
  auto h = valid_header();
  h["alg"] = "HS256";
  std::string input = base64url_encode(json::serialize(h)) + "." + base64url_encode(json::serialize(valid_claims()));
  auto secret = test_key().jwks_json(test_kid());
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  auto token = input + "." + base64url_encode(std::string_view{reinterpret_cast<char*>(mac), len});
  auto out = check(token);
  REQUIRE_FALSE(out.ok);
  CHECK(out.error.id == error_id::token_invalid);
  CHECK(out.error.message.find("RS256") != std::string::npos);
}

TEST_CASE("other algorithms (ES256, PS256, RS512) are refused", "[jwt][attack]") {
  for (const char* alg : {"ES256", "PS256", "RS512", "HS512"}) {
    auto h = valid_header();
    h["alg"] = alg;
    CHECK(failure_of(make_token(valid_claims(), h)) == error_id::token_invalid);
  }
}

TEST_CASE("an unknown or absent kid is refused; unknown ones are flagged for refetch", "[jwt][attack]") {
  auto h = valid_header();
  h["kid"] = "someone-elses-key";
  auto out = check(make_token(valid_claims(), h));
  REQUIRE_FALSE(out.ok);
  CHECK(out.error.id == error_id::token_invalid);
  CHECK(out.unknown_kid);
  h.erase("kid");
  out = check(make_token(valid_claims(), h));
  CHECK(out.error.id == error_id::token_invalid);
  CHECK_FALSE(out.unknown_kid);
}

TEST_CASE("a kid holding path or quote characters is only ever a map key", "[jwt][attack]") {
  for (const char* kid : {"../../../../etc/passwd", "\" OR 1=1 --", "/dev/null", "kid\\with\\backslashes"}) {
    auto h = valid_header();
    h["kid"] = kid;
    auto out = check(make_token(valid_claims(), h));
    REQUIRE_FALSE(out.ok);
    CHECK(out.error.id == error_id::token_invalid);
  }
}

TEST_CASE("a tampered payload fails the signature", "[jwt][attack]") {
  auto token = make_token(valid_claims());
  auto c = valid_claims();
  c["tenant_id"] = "t_victim";
  auto dot1 = token.find('.');
  auto dot2 = token.find('.', dot1 + 1);
  auto forged = token.substr(0, dot1 + 1) + base64url_encode(json::serialize(c)) + token.substr(dot2);
  auto out = check(forged);
  REQUIRE_FALSE(out.ok);
  CHECK(out.error.message.find("signature") != std::string::npos);
}

TEST_CASE("a token signed by another key with the trusted kid fails", "[jwt][attack]") {
  auto other = private_key::generate_rsa(2048);
  auto token = sign_compact(json::serialize(valid_header()), json::serialize(valid_claims()), other);
  CHECK(failure_of(token) == error_id::token_invalid);
}

TEST_CASE("claims are checked: issuer, lifetime, times, principal, scopes, jti", "[jwt]") {
  auto now = unix_now();
  auto with = [](const char* name, json::value v) {
    auto c = valid_claims();
    c[name] = std::move(v);
    return make_token(c);
  };
  auto without = [](const char* name) {
    auto c = valid_claims();
    c.erase(name);
    return make_token(c);
  };
  CHECK(failure_of(with("iss", "https://evil.example")) == error_id::token_invalid);
  CHECK(failure_of(without("iss")) == error_id::token_invalid);
  // Lifetime over one hour.
  auto c = valid_claims();
  c["iat"] = now - 10;
  c["exp"] = now - 10 + 3601;
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  // Expired (beyond the 60 s skew) is its own reason.
  c["iat"] = now - 1000;
  c["exp"] = now - 100;
  CHECK(failure_of(make_token(c)) == error_id::token_expired);
  // Within the skew still passes.
  c["iat"] = now - 1000;
  c["exp"] = now - 30;
  CHECK(check(make_token(c)).ok);
  // Issued in the future.
  c["iat"] = now + 300;
  c["exp"] = now + 600;
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  CHECK(failure_of(with("exp", "tomorrow")) == error_id::token_invalid);
  // A lifetime whose arithmetic would overflow: iat near INT64_MIN, exp years ahead.
  c["iat"] = std::int64_t{-9223372036854775000};
  c["exp"] = now + 10 * 365 * 86400;
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  c["iat"] = -1;
  c["exp"] = now + 60;
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  c["iat"] = now;
  c["exp"] = std::uint64_t{18446744073709551000ull};
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  // A last sign-in in the future, beyond the clock-skew allowance; within it passes.
  c["exp"] = now + 600;
  c["auth_time"] = now + 3600;
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  c["auth_time"] = now + 30;
  CHECK(check(make_token(c)).ok);
  c["auth_time"] = -5;
  CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  CHECK(failure_of(without("exp")) == error_id::token_invalid);
  CHECK(failure_of(with("sub", "x_alice")) == error_id::token_invalid);
  CHECK(failure_of(with("sub", "u_")) == error_id::token_invalid);
  CHECK(failure_of(with("scopes", "content-lake.read")) == error_id::token_invalid);
  CHECK(failure_of(with("scopes", json::array{"ok", 5})) == error_id::token_invalid);
  CHECK(failure_of(without("scopes")) == error_id::token_invalid);
  CHECK(failure_of(without("jti")) == error_id::token_invalid);
  CHECK(failure_of(without("client_id")) == error_id::token_invalid);
}

TEST_CASE("a token naming no tenant is TENANT_MISMATCH", "[jwt]") {
  auto c = valid_claims();
  c.erase("tenant_id");
  CHECK(failure_of(make_token(c)) == error_id::tenant_mismatch);
  c["tenant_id"] = "";
  CHECK(failure_of(make_token(c)) == error_id::tenant_mismatch);
}

TEST_CASE("typ other than JWT and crit headers are refused", "[jwt][attack]") {
  auto h = valid_header();
  h["typ"] = "at+jwt";
  CHECK(failure_of(make_token(valid_claims(), h)) == error_id::token_invalid);
  h = valid_header();
  h.erase("typ");
  CHECK(check(make_token(valid_claims(), h)).ok);
  h["crit"] = json::array{"exp"};
  CHECK(failure_of(make_token(valid_claims(), h)) == error_id::token_invalid);
}

TEST_CASE("an oversized token is refused before any parsing", "[jwt][attack]") {
  auto c = valid_claims();
  c["padding"] = std::string(9000, 'x');
  auto out = check(make_token(c));
  REQUIRE_FALSE(out.ok);
  CHECK(out.error.message.find("8192") != std::string::npos);
}

TEST_CASE("malformed base64url, JSON and structure are TOKEN_INVALID", "[jwt][attack]") {
  auto good = make_token(valid_claims());
  CHECK(failure_of("not-a-token") == error_id::token_invalid);
  CHECK(failure_of("a.b") == error_id::token_invalid);
  CHECK(failure_of(good + ".extra") == error_id::token_invalid);
  CHECK(failure_of("%%%." + good.substr(good.find('.') + 1)) == error_id::token_invalid);
  // Signed, but the payload is not JSON.
  auto token = base64url_encode(json::serialize(valid_header())) + "." + base64url_encode("{not json");
  token += "." + base64url_encode(test_key().sign_rs256(token));
  CHECK(failure_of(token) == error_id::token_invalid);
  // Header not JSON.
  CHECK(failure_of(base64url_encode("[1,2]") + ".e30.sig") == error_id::token_invalid);
  // Signature not base64url.
  auto dot2 = good.rfind('.');
  CHECK(failure_of(good.substr(0, dot2 + 1) + "***") == error_id::token_invalid);
}

TEST_CASE("verification messages never contain the token", "[jwt][secrets]") {
  auto c = valid_claims();
  c["iss"] = "https://evil.example";
  auto token = make_token(c);
  auto out = check(token);
  REQUIRE_FALSE(out.ok);
  CHECK(out.error.message.find(token.substr(0, 20)) == std::string::npos);
  CHECK(out.error.message.find("evil") == std::string::npos);
}

TEST_CASE("a JWKS keeps RSA keys of at least 2048 bits and rejects non-JWKS documents", "[jwt]") {
  std::string error;
  CHECK_FALSE(key_set::parse("[]", &error));
  CHECK_FALSE(key_set::parse(R"({"keys": 1})", &error));
  auto small = private_key::generate_rsa(1024);
  auto keys = key_set::parse(small.jwks_json("small"), &error);
  REQUIRE(keys);
  CHECK(keys->size() == 0);
  auto ec = key_set::parse(R"({"keys":[{"kty":"EC","kid":"e","crv":"P-256","x":"AA","y":"AA"}]})", &error);
  REQUIRE(ec);
  CHECK(ec->size() == 0);
  CHECK(trusted().size() == 1);
  CHECK(trusted().find(test_kid()) != nullptr);
}

TEST_CASE("issue_token sets every spec 5.2 claim and enforces its rules", "[jwt]") {
  token_request req;
  req.issuer = test_issuer;
  req.kid = test_kid();
  req.subject = "u_bob";
  req.tenant_id = "t_x";
  req.client_id = "a_cli";
  req.scopes = {"content-lake.read", "content-lake.write"};
  req.now = unix_now();
  req.ttl = 3600;
  auto token = issue_token(test_key(), req);
  auto out = check(token);
  REQUIRE(out.ok);
  CHECK(out.who.auth_time == req.now);
  CHECK(out.who.expires_at - out.who.issued_at == 3600);
  CHECK(out.who.scopes.size() == 2);
  CHECK_FALSE(out.who.token_id.empty());
  auto header = json::parse(*base64url_decode(token.substr(0, token.find('.')))).as_object();
  CHECK(header.at("alg").as_string() == "RS256");
  CHECK(header.at("typ").as_string() == "JWT");
  CHECK(header.at("kid").as_string() == test_kid());

  req.subject = "a_svc";
  req.client_id = "";
  out = check(issue_token(test_key(), req));
  REQUIRE(out.ok);
  CHECK(out.who.client_id == "a_svc");
  CHECK_FALSE(out.who.auth_time.has_value());

  req.ttl = 3601;
  CHECK_THROWS_AS(issue_token(test_key(), req), std::invalid_argument);
  req.ttl = 60;
  req.client_id = "a_other";
  CHECK_THROWS_AS(issue_token(test_key(), req), std::invalid_argument);
  req.subject = "u_bob";
  req.client_id = "";
  CHECK_THROWS_AS(issue_token(test_key(), req), std::invalid_argument);
}

TEST_CASE("a private key survives PEM round trip with the same thumbprint", "[jwt]") {
  auto pem = test_key().to_pem();
  auto back = private_key::from_pem(pem);
  REQUIRE(back);
  CHECK(back->thumbprint() == test_kid());
  CHECK_FALSE(private_key::from_pem("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n"));
}

TEST_CASE("identity claims with a control character or too long are refused, never cut", "[jwt]") {
  auto with = [](const char* name, std::string value) {
    auto c = valid_claims("u_alice");
    c[name] = json::string{value};
    return make_token(c);
  };
  // U+0000 (which PostgreSQL's text would end at), another C0, DEL and a C1 control, in each claim
  // the stores key on or compare.
  for (std::string control : {std::string{"\0", 1}, std::string{"\x1f"}, std::string{"\x7f"}, std::string{"\xc2\x85"}}) {
    CHECK(failure_of(with("tenant_id", "t_test" + control + "evil")) == error_id::token_invalid);
    CHECK(failure_of(with("sub", "u_alice" + control + "mallory")) == error_id::token_invalid);
    CHECK(failure_of(with("client_id", "a_testapp" + control + "x")) == error_id::token_invalid);
    CHECK(failure_of(with("jti", "j" + control)) == error_id::token_invalid);
    auto c = valid_claims("u_alice");
    c["scopes"] = json::array{"content-lake.read" + control};
    CHECK(failure_of(make_token(c)) == error_id::token_invalid);
  }
  CHECK(failure_of(with("tenant_id", "t_" + std::string(max_identity_claim_bytes - 1, 'x'))) == error_id::token_invalid);
  auto longest = check(with("tenant_id", "t_" + std::string(max_identity_claim_bytes - 2, 'x')));
  REQUIRE(longest.ok);
  CHECK(longest.who.tenant_id.size() == max_identity_claim_bytes);
  // Other Unicode stays a claim like any other.
  auto accented = check(with("sub", "u_élodie"));
  REQUIRE(accented.ok);
  CHECK(accented.who.subject == "u_élodie");
}
