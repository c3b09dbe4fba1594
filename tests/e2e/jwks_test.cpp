// Production identity: JWKS file re-read on change, JWKS URL over HTTPS with bounded refetching.

#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/jwks_server.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <fstream>
#include <thread>

using namespace cl::testing;
namespace json = boost::json;

namespace {

/// A second signing key, as after a rotation at the issuer.
const cl::domain::private_key& rotated_key() {
  static const auto key = cl::domain::private_key::generate_rsa(2048);
  return key;
}

std::string rotated_token() {
  auto header = valid_header();
  header["kid"] = rotated_key().thumbprint();
  return cl::domain::sign_compact(json::serialize(header), json::serialize(valid_claims()), rotated_key());
}

/// Settings for a service that takes its keys from `issuer` over HTTPS, trusting the issuer's CA.
std::function<void(cl::config::settings&)> keys_from(const jwks_server& issuer, const std::string& ca_file,
                                                     int refetch_min_seconds = 30) {
  return [url = issuer.url(), ca_file, refetch_min_seconds](cl::config::settings& s) {
    s.auth.jwks_file.clear();
    s.auth.jwks_url = url;
    s.auth.jwks_ca_file = ca_file;
    s.auth.jwks_refetch_min_seconds = refetch_min_seconds;
  };
}

int status_for(unsigned short port, const std::string& token) {
  auto r = get_with_token(port, "/v0/content-lake/resources/res_x", token);
  return r ? r->status : -1;
}

}  // namespace

TEST_CASE("a changed JWKS file is re-read: new keys work, removed keys stop working", "[jwks]") {
  test_service svc;
  auto old_token = read_token();
  REQUIRE(status_for(svc.port(), old_token) == 403);
  REQUIRE(status_for(svc.port(), rotated_token()) == 401);
  {
    std::ofstream out{svc.jwks_path() + ".tmp"};
    out << rotated_key().jwks_json(rotated_key().thumbprint());
  }
  std::rename((svc.jwks_path() + ".tmp").c_str(), svc.jwks_path().c_str());
  CHECK(eventually([&] { return status_for(svc.port(), rotated_token()) == 403; }));
  // The old key left the set: its (cached) token is refused from now on.
  CHECK(status_for(svc.port(), old_token) == 401);
}

TEST_CASE("a JWKS URL is fetched over verified HTTPS at start", "[jwks]") {
  temp_dir dir;
  jwks_server issuer{test_key().jwks_json(test_kid()), dir.path + "/ca.pem"};
  test_service svc{keys_from(issuer, dir.path + "/ca.pem")};
  CHECK(eventually([&] { return status_for(svc.port(), read_token()) == 403; }));
  auto ready = http_request(svc.admin_port(), "GET", "/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 200);
  CHECK(issuer.fetches() == 1);
}

TEST_CASE("a flood of unknown kids costs the issuer at most one refetch per interval", "[jwks][attack]") {
  temp_dir dir;
  jwks_server issuer{test_key().jwks_json(test_kid()), dir.path + "/ca.pem"};
  test_service svc{keys_from(issuer, dir.path + "/ca.pem", 30)};
  REQUIRE(eventually([&] { return status_for(svc.port(), read_token()) == 403; }));
  int before = issuer.fetches();
  for (int i = 0; i < 40; ++i) {
    auto header = valid_header();
    header["kid"] = "made-up-" + std::to_string(i);
    CHECK(status_for(svc.port(), make_token(valid_claims(), header)) == 401);
  }
  CHECK(issuer.fetches() - before <= 1);
}

TEST_CASE("an unknown kid after the refetch interval picks up the issuer's rotated key", "[jwks]") {
  temp_dir dir;
  jwks_server issuer{test_key().jwks_json(test_kid()), dir.path + "/ca.pem"};
  test_service svc{keys_from(issuer, dir.path + "/ca.pem", 1)};
  REQUIRE(eventually([&] { return status_for(svc.port(), read_token()) == 403; }));
  issuer.set_jwks(rotated_key().jwks_json(rotated_key().thumbprint()));
  CHECK(eventually([&] { return status_for(svc.port(), rotated_token()) == 403; }));
  CHECK(issuer.fetches() >= 2);
}

TEST_CASE("an issuer whose certificate is not trusted yields no keys", "[jwks]") {
  temp_dir dir;
  jwks_server issuer{test_key().jwks_json(test_kid()), dir.path + "/ca.pem"};
  test_service svc{[&](cl::config::settings& s) {
    s.auth.jwks_file.clear();
    s.auth.jwks_url = issuer.url();  // no jwks_ca_file: the self-signed certificate is not trusted
  }};
  auto r = get_with_token(svc.port(), "/v0/content-lake/resources/res_x", read_token());
  REQUIRE(r);
  CHECK(r->status == 401);
  CHECK(issuer.fetches() == 0);
  auto ready = http_request(svc.admin_port(), "GET", "/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 503);
}

TEST_CASE("with both a JWKS file and a JWKS URL, keys from both are trusted", "[jwks]") {
  temp_dir dir;
  jwks_server issuer{rotated_key().jwks_json(rotated_key().thumbprint()), dir.path + "/ca.pem"};
  test_service svc{[&](cl::config::settings& s) {
    keys_from(issuer, dir.path + "/ca.pem")(s);
    s.auth.jwks_file = dir.path + "/file-jwks.json";
    std::ofstream{s.auth.jwks_file} << test_key().jwks_json(test_kid());
  }};
  CHECK(eventually([&] { return status_for(svc.port(), rotated_token()) == 403; }));
  CHECK(status_for(svc.port(), read_token()) == 403);
}
