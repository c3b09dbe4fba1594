// Authentication over the wire (spec 5, 7.3): every auth reason, and attacks end to end.

#include "domain/base64url.hpp"
#include "tests/e2e/log_capture.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::testing;
namespace json = boost::json;

namespace {

constexpr const char* resource = "/v0/content-lake/resources/res_any";

struct auth_error {
  int status;
  std::string code, reason, domain, message;
};

auth_error call(unsigned short port, const std::vector<std::pair<std::string, std::string>>& headers) {
  auto r = http_request(port, "GET", resource, headers);
  REQUIRE(r);
  auto e = json::parse(r->body).as_object().at("error").as_object();
  return {r->status, std::string{e.at("code").as_string()}, std::string{e.at("reason").as_string()},
          std::string{e.at("domain").as_string()}, std::string{e.at("message").as_string()}};
}

auth_error with_token(unsigned short port, const std::string& token) {
  return call(port, {{"Authorization", "Bearer " + token}});
}

}  // namespace

TEST_CASE("no token, or not a bearer token, is 401 TOKEN_MISSING", "[auth]") {
  test_service svc;
  for (auto headers : std::vector<std::vector<std::pair<std::string, std::string>>>{
         {}, {{"Authorization", "Basic dXNlcjpwYXNz"}}, {{"Authorization", "Bearer "}}, {{"X-Service-Tenant-Id", "t_test"}}}) {
    auto e = call(svc.port(), headers);
    CHECK(e.status == 401);
    CHECK(e.code == "UNAUTHENTICATED");
    CHECK(e.reason == "TOKEN_MISSING");
    CHECK(e.domain == "auth.service.com");
  }
}

TEST_CASE("an expired token is 401 TOKEN_EXPIRED", "[auth]") {
  test_service svc;
  auto c = valid_claims();
  c["iat"] = unix_now() - 3000;
  c["exp"] = unix_now() - 1000;
  auto e = with_token(svc.port(), make_token(c));
  CHECK(e.status == 401);
  CHECK(e.reason == "TOKEN_EXPIRED");
}

TEST_CASE("defective tokens are 401 TOKEN_INVALID", "[auth][attack]") {
  test_service svc;
  std::vector<std::string> tokens;
  auto h = valid_header();
  h["alg"] = "none";
  tokens.push_back(cl::domain::base64url_encode(json::serialize(h)) + "."
                   + cl::domain::base64url_encode(json::serialize(valid_claims())) + ".");
  h = valid_header();
  h["kid"] = "../../etc/passwd";
  tokens.push_back(make_token(valid_claims(), h));
  auto c = valid_claims();
  c["iss"] = "https://evil.example";
  tokens.push_back(make_token(c));
  c = valid_claims();
  c["exp"] = unix_now() + 7200;
  tokens.push_back(make_token(c));
  // A lifetime check that overflowed: iat near INT64_MIN, exp ten years ahead, signed by the trusted key.
  c = valid_claims();
  c["iat"] = std::int64_t{-9223372036854775000};
  c["exp"] = unix_now() + 10 * 365 * 86400;
  tokens.push_back(make_token(c));
  // A last sign-in in the future beyond the clock-skew allowance.
  c = valid_claims();
  c["auth_time"] = unix_now() + 3600;
  tokens.push_back(make_token(c));
  // Scopes as one space-separated string: the contract's claim is an array.
  c = valid_claims();
  c["scopes"] = "content-lake.read content-lake.write";
  tokens.push_back(make_token(c));
  tokens.push_back("eyJhbGciOiJSUzI1NiJ9.!!!.abc");
  auto good = make_token(valid_claims());
  tokens.push_back(good.substr(0, good.size() - 4) + "AAAA");
  for (const auto& t : tokens) {
    auto e = with_token(svc.port(), t);
    CHECK(e.status == 401);
    CHECK(e.reason == "TOKEN_INVALID");
    CHECK(e.message.find(t) == std::string::npos);
  }
  // Over 8 KiB: refused, and the header limit is not what refuses it.
  c = valid_claims();
  c["padding"] = std::string(9000, 'p');
  auto e = with_token(svc.port(), make_token(c));
  CHECK(e.status == 401);
  CHECK(e.reason == "TOKEN_INVALID");
}

TEST_CASE("a token naming no tenant is 403 TENANT_MISMATCH", "[auth]") {
  test_service svc;
  auto c = valid_claims();
  c.erase("tenant_id");
  auto e = with_token(svc.port(), make_token(c));
  CHECK(e.status == 403);
  CHECK(e.code == "PERMISSION_DENIED");
  CHECK(e.reason == "TENANT_MISMATCH");
  CHECK(e.domain == "auth.service.com");
}

TEST_CASE("a token without the route's scope is 403 SCOPE_MISSING naming the scope", "[auth]") {
  test_service svc;
  auto e = with_token(svc.port(), token_with("content-lake.write products.read"));
  CHECK(e.status == 403);
  CHECK(e.reason == "SCOPE_MISSING");
  CHECK(e.domain == "auth.service.com");
  CHECK(e.message.find("content-lake.read") != std::string::npos);
}

TEST_CASE("a valid token reaches the route; repeated use is served from the cache", "[auth]") {
  test_service svc;
  auto token = read_token();
  for (int i = 0; i < 3; ++i) {
    auto e = with_token(svc.port(), token);
    // Past auth: layer 2 refuses an id the caller holds no grant on (or that does not exist).
    CHECK(e.status == 403);
    CHECK(e.reason == "ACCESS_DENIED");
  }
  // An application token works the same way.
  auto e = with_token(svc.port(), token_with("content-lake.read", "t_test", "a_robot"));
  CHECK(e.reason == "ACCESS_DENIED");
}

TEST_CASE("the OpenAPI document needs no token", "[auth]") {
  test_service svc;
  auto r = http_request(svc.port(), "GET", "/v0/openapi.json");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->header("content-type") == "application/json");
  CHECK(std::string{json::parse(r->body).as_object().at("openapi").as_string()}.rfind("3.1", 0) == 0);
}

TEST_CASE("every 401 carries a Bearer challenge; a sent token that is refused says invalid_token", "[auth][rfc6750]") {
  test_service svc;
  auto challenge = [&](const std::string& method, const std::string& path,
                       const std::vector<std::pair<std::string, std::string>>& headers) {
    auto r = http_request(svc.port(), method, path, headers, method == "POST" ? "{}" : "");
    REQUIRE(r);
    CHECK(r->status == 401);
    return r->header("www-authenticate");
  };
  // No token: the bare scheme, and where the protected resource metadata is (RFC 9728; from the Host sent).
  const std::string bare = R"(Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource")";
  CHECK(challenge("GET", resource, {}) == bare);
  CHECK(challenge("POST", "/v0/content-lake/works", {{"Content-Type", "application/json"}}) == bare);
  CHECK(challenge("GET", resource, {{"Authorization", "Basic dXNlcjpwYXNz"}}) == bare);
  auto c = valid_claims();
  c["iat"] = unix_now() - 3000;
  c["exp"] = unix_now() - 1000;
  for (const auto& token : {std::string{"not.a.token"}, make_token(c)}) {
    auto value = challenge("GET", resource, {{"Authorization", "Bearer " + token}});
    CHECK(value.rfind(R"(Bearer error="invalid_token")", 0) == 0);
    CHECK(value.find(R"(, resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource")") != std::string::npos);
    CHECK(value.find(token) == std::string::npos);
  }
  // Not on other statuses.
  auto ok = http_request(svc.port(), "GET", resource, {{"Authorization", "Bearer " + make_token(valid_claims())}});
  CHECK(ok->status == 403);
  CHECK(ok->header("www-authenticate").empty());
}

TEST_CASE("nbf is honoured; non-integral exp, iat, nbf and auth_time are refused", "[auth]") {
  test_service svc;
  auto now = unix_now();
  auto c = valid_claims();
  c["nbf"] = now + 600;
  CHECK(with_token(svc.port(), make_token(c)).reason == "TOKEN_INVALID");
  c["nbf"] = now - 10;
  CHECK(with_token(svc.port(), make_token(c)).status == 403);  // valid: the Resource itself is refused
  for (const char* claim : {"exp", "iat", "nbf", "auth_time"}) {
    INFO(claim);
    c = valid_claims();
    double base = static_cast<double>(std::string{claim} == "exp" ? now + 600 : now - 5);
    c[claim] = base + 0.5;
    auto e = with_token(svc.port(), make_token(c));
    CHECK(e.status == 401);
    CHECK(e.reason == "TOKEN_INVALID");
    c[claim] = base;  // a whole number written as a JSON float is still integral
    CHECK(with_token(svc.port(), make_token(c)).status == 403);
  }
}

TEST_CASE("two Authorization headers are refused, never served", "[auth][attack]") {
  test_service svc;
  auto good = "Bearer " + make_token(valid_claims());
  for (const auto& second : {good, std::string{"Bearer garbage"}, std::string{"Basic dXNlcjpwYXNz"}}) {
    auto r = http_request(svc.port(), "GET", "/v0/openapi.json", {{"Authorization", good}, {"Authorization", second}});
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(reason_of(*r) == "DUPLICATE_PARAMETER");
  }
}
