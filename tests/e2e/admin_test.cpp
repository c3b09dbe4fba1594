// The operations listener: /metrics, /healthz, /readyz; not part of the public API.

#include "storage/kv/lmdb_store.hpp"
#include "storage/stores.hpp"
#include "storage/search/index.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/threads.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

using namespace cl::testing;

TEST_CASE("metrics count requests by route template and status", "[admin]") {
  test_service svc;
  REQUIRE(get_with_token(svc.port(), "/v0/content-lake/resources/res_a", read_token())->status == 403);
  REQUIRE(http_request(svc.port(), "GET", "/v0/openapi.json")->status == 200);
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  CHECK(m->status == 200);
  CHECK(m->header("content-type").rfind("text/plain", 0) == 0);
  CHECK(m->body.find(R"(contentlake_http_requests_total{method="GET",route="/v0/content-lake/resources/{id}",status="403"} 1)")
        != std::string::npos);
  CHECK(m->body.find(R"(contentlake_http_requests_total{method="GET",route="/v0/openapi.json",status="200"} 1)")
        != std::string::npos);
  CHECK(m->body.find("contentlake_http_request_duration_seconds_bucket") != std::string::npos);
  CHECK(m->body.find("contentlake_actor_restarts_total") != std::string::npos);
  CHECK(m->body.find("contentlake_rate_limited_total 0") != std::string::npos);
}

TEST_CASE("contentlake_build_info says the version, the commit and the data formats", "[admin]") {
  test_service svc;
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  std::smatch found;
  REQUIRE(std::regex_search(m->body, found, std::regex{R"re(\ncontentlake_build_info\{([^}]*)\} 1\n)re"}));
  std::string labels = found[1];
  CHECK(std::regex_search(labels, std::regex{R"re(commit="([0-9a-f]{12}(-modified)?|unknown)")re"}));
  CHECK(std::regex_search(labels, std::regex{R"re(version="\d+\.\d+\.\d+")re"}));
  CHECK(labels.find("record_format=\"" + std::to_string(cl::storage::lmdb_format_version) + "\"") != std::string::npos);
  CHECK(labels.find(std::string{"index_format=\""} + cl::storage::search_index::format() + "\"") != std::string::npos);
}

TEST_CASE("metrics count durable commits and the writes they carried", "[admin]") {
  test_service svc;
  auto token = read_token("content-lake.read content-lake.write");
  for (int i = 0; i < 3; ++i)
    REQUIRE(post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"Counted"})")->status == 201);
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  auto value = [&](const std::string& name) {
    auto at = m->body.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(m->body.substr(at + name.size() + 2));
  };
  auto commits = value("contentlake_storage_commits_total");
  auto mutations = value("contentlake_storage_mutations_total");
  CHECK(mutations == 3);  // one per create: each is acknowledged only after its commit
  CHECK(commits >= 1);
  CHECK(commits <= 3);
}

TEST_CASE("the search index's lag is on /metrics and /readyz says when it has caught up", "[admin][search]") {
  test_service svc;
  auto token = read_token("content-lake.read content-lake.write");
  for (int i = 0; i < 3; ++i)
    REQUIRE(post_json(svc.port(), "/v0/content-lake/resources", token,
                      R"({"title":"Tides","type":"ARTICLE","language":"en","content":{"format":"cl.content/1","blocks":[]}})")
              ->status == 201);
  auto gauge = [&](const std::string& name) {
    auto m = http_request(svc.admin_port(), "GET", "/metrics");
    auto at = m ? m->body.find("\n" + name + " ") : std::string::npos;
    return at == std::string::npos ? -1.0 : std::stod(m->body.substr(at + name.size() + 2));
  };
  // The three Resources reach the index (the indexer runs: the gauge starts at 0).
  CHECK(eventually([&] { return gauge("contentlake_search_index_documents") == 3.0; }));
  CHECK(gauge("contentlake_search_index_lag_changes") == 0.0);
  auto ready = http_request(svc.admin_port(), "GET", "/readyz");
  REQUIRE(ready);
  CHECK(ready->body.find(R"("search_index_caught_up":true)") != std::string::npos);
  CHECK(http_request(svc.admin_port(), "GET", "/metrics")->body.find("contentlake_search_index_lag_seconds 0") !=
        std::string::npos);
  // Operators find the indexer's thread (its work lane) by name (top -H, /proc/PID/task/*/comm).
  auto threads = threads_of();
  CHECK(std::any_of(threads.begin(), threads.end(), [](const thread_info& t) { return t.name == "cl-indexer"; }));
}

TEST_CASE("healthz and readyz answer on the admin listener only", "[admin]") {
  test_service svc;
  auto h = http_request(svc.admin_port(), "GET", "/healthz");
  REQUIRE(h);
  CHECK(h->status == 200);
  // Ready once every required check passes (the search index catches up with the change log just
  // after start: a moment of 503 is the honest answer then).
  std::optional<http_response> ready;
  CHECK(eventually([&] {
    ready = http_request(svc.admin_port(), "GET", "/readyz");
    return ready && ready->status == 200;
  }));
  REQUIRE(ready);
  CHECK(ready->body.find(R"("status":"ready")") != std::string::npos);
  CHECK(http_request(svc.port(), "GET", "/metrics")->status == 404);
  CHECK(http_request(svc.port(), "GET", "/healthz")->status == 404);
  CHECK(http_request(svc.admin_port(), "GET", "/nothing")->status == 404);
  CHECK(http_request(svc.admin_port(), "POST", "/metrics")->status == 405);
}

TEST_CASE("with a drain delay, a stopping node fails /readyz first and goes on serving until the delay ends",
          "[admin][drain]") {
  test_service svc{[](cl::config::settings& s) { set_option(s, "cluster.drain_delay_ms", "1500"); }};
  REQUIRE(eventually([&] { return http_request(svc.admin_port(), "GET", "/readyz")->status == 200; }));
  auto asked = std::chrono::steady_clock::now();
  svc.service().stop();
  REQUIRE(eventually([&] {
    auto r = http_request(svc.admin_port(), "GET", "/readyz");
    return r && r->status == 503 && r->body.find(R"("draining":true)") != std::string::npos;
  }));
  // Not ready, still serving: a new connection is accepted and answered (a load balancer still
  // sending meanwhile loses nothing); the listener closes only when the delay ends.
  auto served = http_request(svc.port(), "GET", "/v0/openapi.json");
  REQUIRE(served);
  CHECK(served->status == 200);
  CHECK(svc.stop_and_wait() == 0);
  // The behaviour under test is a configured delay: a lower bound, which a slow machine cannot fail.
  CHECK(std::chrono::steady_clock::now() - asked >= std::chrono::milliseconds{1500});
  CHECK_THROWS(http_request(svc.port(), "GET", "/v0/openapi.json"));  // then closed: the connection is refused
}
