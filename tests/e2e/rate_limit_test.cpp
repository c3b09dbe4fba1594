// Rate limiting per client_id (spec 8): 429 RATE_LIMITED with Retry-After.

#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::testing;
namespace json = boost::json;

TEST_CASE("a client over its quota gets 429 RATE_LIMITED with Retry-After; others do not", "[rate]") {
  test_service svc{[](cl::config::settings& s) {
    s.rate_limit.requests_per_second = 0.2;  // one token per 5 s
    s.rate_limit.burst = 3;
  }};
  auto token = read_token();
  connection c{svc.port()};
  for (int i = 0; i < 3; ++i) {
    auto r = c.request("GET", "/v0/content-lake/resources/res_x", {{"Authorization", "Bearer " + token}});
    REQUIRE(r);
    CHECK(r->status == 403);
  }
  auto r = c.request("GET", "/v0/content-lake/resources/res_x", {{"Authorization", "Bearer " + token}});
  REQUIRE(r);
  CHECK(r->status == 429);
  auto e = json::parse(r->body).as_object().at("error").as_object();
  CHECK(e.at("reason").as_string() == "RATE_LIMITED");
  CHECK(e.at("code").as_string() == "RESOURCE_EXHAUSTED");
  auto retry = std::stoi(r->header("retry-after"));
  CHECK(retry >= 1);
  CHECK(retry <= 5);

  // The bucket is per client_id: another application is unaffected.
  auto other = token_with("content-lake.read", "t_test", "a_other_client");
  r = get_with_token(svc.port(), "/v0/content-lake/resources/res_x", other);
  REQUIRE(r);
  CHECK(r->status == 403);

  auto metrics = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("contentlake_rate_limited_total 1") != std::string::npos);
}

TEST_CASE("a restart of the rate limiter keeps every client's quota", "[rate][fault]") {
  test_service svc{[](cl::config::settings& s) {
    s.rate_limit.requests_per_second = 0.01;  // no token comes back within the test
    s.rate_limit.burst = 2;
    s.admin_fault_injection = true;
  }};
  auto token = read_token();
  auto get = [&] { return get_with_token(svc.port(), "/v0/content-lake/resources/res_x", token)->status; };
  CHECK(get() == 403);
  CHECK(get() == 403);
  CHECK(get() == 429);
  auto restarts = [&] {
    auto m = http_request(svc.admin_port(), "GET", "/metrics");
    return m && m->body.find(R"(contentlake_actor_restarts_total{actor="rate_limiter"} 1)") != std::string::npos;
  };
  auto killed = http_request(svc.admin_port(), "POST", "/faults/kill?actor=rate_limiter");
  REQUIRE(killed);
  REQUIRE(killed->status == 202);
  REQUIRE(eventually(restarts));
  // The buckets live beside the actor, not in it: the new one does not hand out a fresh burst.
  CHECK(get() == 429);
}
