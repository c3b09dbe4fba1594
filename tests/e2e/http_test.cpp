// The HTTP layer over real sockets: error shapes, limits, pipelining, keep-alive, request ids,
// the connection cap and the idle timeout.

#include "tests/e2e/log_capture.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::testing;
namespace json = boost::json;

namespace {

/// The error object of a response, after checking the spec 7.1 shape.
json::object error_of(const http_response& r) {
  REQUIRE(r.header("content-type") == "application/json");
  auto v = json::parse(r.body).as_object();
  REQUIRE(v.size() == 1);
  auto e = v.at("error").as_object();
  REQUIRE(e.at("code").is_string());
  REQUIRE(e.at("reason").is_string());
  REQUIRE(e.at("domain").is_string());
  REQUIRE(e.at("message").is_string());
  REQUIRE(e.at("details").is_array());
  return e;
}

}  // namespace

TEST_CASE("an unknown Resource id is 403 ACCESS_DENIED through the whole path (permission before existence)", "[http]") {
  test_service svc;
  auto r = get_with_token(svc.port(), "/v0/content-lake/resources/res_missing", read_token());
  REQUIRE(r);
  CHECK(r->status == 403);
  auto e = error_of(*r);
  CHECK(e.at("code").as_string() == "PERMISSION_DENIED");
  CHECK(e.at("reason").as_string() == "ACCESS_DENIED");
  CHECK(e.at("domain").as_string() == "contentlake.service.com");
  CHECK(r->header("cache-control") == "no-store");
}

TEST_CASE("unknown paths are 404 ROUTE_NOT_FOUND and wrong methods 405 with Allow", "[http]") {
  test_service svc;
  auto r = http_request(svc.port(), "GET", "/v0/content/documents/x");
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(reason_of(*r) == "ROUTE_NOT_FOUND");
  r = http_request(svc.port(), "GET", "/v0/resources/res_x");
  REQUIRE(r);
  CHECK(r->status == 404);
  r = http_request(svc.port(), "DELETE", "/v0/content-lake/resources/res_x");
  REQUIRE(r);
  CHECK(r->status == 405);
  CHECK(reason_of(*r) == "METHOD_NOT_ALLOWED");
  CHECK(r->header("allow") == "GET, PUT, PATCH");
}

TEST_CASE("a body over the limit is 400 LIMIT_EXCEEDED", "[http][limits]") {
  test_service svc{[](cl::config::settings& s) { s.http.body_limit_bytes = 1024; }};
  auto r = http_request(svc.port(), "POST", "/v0/content-lake/resources/res_x", {}, std::string(4096, 'x'));
  REQUIRE(r);
  CHECK(r->status == 400);
  auto e = error_of(*r);
  CHECK(e.at("reason").as_string() == "LIMIT_EXCEEDED");
  CHECK(e.at("details").as_array().size() == 1);
  // At the limit is fine (the route then decides: 405 here).
  r = http_request(svc.port(), "POST", "/v0/content-lake/resources/res_x", {}, std::string(1024, 'x'));
  REQUIRE(r);
  CHECK(r->status == 405);
}

TEST_CASE("a header block over 16 KiB is 400 LIMIT_EXCEEDED", "[http][limits]") {
  test_service svc;
  auto r = http_request(svc.port(), "GET", "/v0/openapi.json", {{"X-Filler", std::string(17 * 1024, 'a')}});
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(reason_of(*r) == "LIMIT_EXCEEDED");
  r = http_request(svc.port(), "GET", "/v0/openapi.json", {{"X-Filler", std::string(8 * 1024, 'a')}});
  REQUIRE(r);
  CHECK(r->status == 200);
}

TEST_CASE("malformed HTTP is 400 MALFORMED_REQUEST and the connection closes", "[http]") {
  test_service svc;
  connection c{svc.port()};
  c.send("GARBAGE\r\n\r\n");
  auto r = c.read_response();
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(reason_of(*r) == "MALFORMED_REQUEST");
  CHECK(c.wait_closed(5000));
  connection c2{svc.port()};
  c2.send("GET /v0/openapi.json HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
  r = c2.read_response();
  REQUIRE(r);
  CHECK(r->status == 400);
}

TEST_CASE("pipelined requests are answered in order on one connection", "[http]") {
  test_service svc;
  auto token = read_token();
  connection c{svc.port()};
  std::string batch;
  for (int i = 0; i < 5; ++i) {
    std::string target = i % 2 ? "/v0/openapi.json" : "/v0/content-lake/resources/res_" + std::to_string(i);
    batch += "GET " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\nX-Request-Id: pipe-"
             + std::to_string(i) + "\r\n\r\n";
  }
  c.send(batch);
  for (int i = 0; i < 5; ++i) {
    auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->header("x-request-id") == "pipe-" + std::to_string(i));
    CHECK(r->status == (i % 2 ? 200 : 403));
  }
}

TEST_CASE("X-Request-Id is echoed when well-formed and generated otherwise", "[http]") {
  test_service svc;
  auto r = http_request(svc.port(), "GET", "/v0/openapi.json", {{"X-Request-Id", "client-abc_123"}});
  REQUIRE(r);
  CHECK(r->header("x-request-id") == "client-abc_123");
  r = http_request(svc.port(), "GET", "/v0/openapi.json", {{"X-Request-Id", "bad id with spaces"}});
  REQUIRE(r);
  CHECK(r->header("x-request-id").rfind("req_", 0) == 0);
  r = http_request(svc.port(), "GET", "/v0/openapi.json");
  REQUIRE(r);
  CHECK(r->header("x-request-id").rfind("req_", 0) == 0);
}

TEST_CASE("keep-alive serves many requests on one connection; Connection: close is honoured", "[http]") {
  test_service svc;
  connection c{svc.port()};
  for (int i = 0; i < 20; ++i) {
    auto r = c.request("GET", "/v0/openapi.json");
    REQUIRE(r);
    CHECK(r->status == 200);
  }
  auto r = c.request("GET", "/v0/openapi.json", {{"Connection", "close"}});
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(c.wait_closed(5000));
}

TEST_CASE("connections over the cap are answered 503 SERVER_OVERLOADED", "[http][limits]") {
  test_service svc{[](cl::config::settings& s) { s.http.max_connections = 2; }};
  connection a{svc.port()}, b{svc.port()};
  REQUIRE(a.request("GET", "/v0/openapi.json")->status == 200);
  REQUIRE(b.request("GET", "/v0/openapi.json")->status == 200);
  {
    connection c{svc.port()};
    auto r = c.request("GET", "/v0/openapi.json");
    REQUIRE(r);
    CHECK(r->status == 503);
    CHECK(reason_of(*r) == "SERVER_OVERLOADED");
    CHECK(r->header("retry-after") == "1");
    CHECK(c.wait_closed(5000));
  }
  // Still served on the connections within the cap.
  CHECK(a.request("GET", "/v0/openapi.json")->status == 200);
}

TEST_CASE("an idle connection is closed after the idle timeout", "[http][limits]") {
  test_service svc{[](cl::config::settings& s) { s.http.idle_timeout_seconds = 1; }};
  connection c{svc.port()};
  REQUIRE(c.request("GET", "/v0/openapi.json")->status == 200);
  CHECK(c.wait_closed(10000));
  // A connection that sends half a header block is closed too (slowloris).
  connection slow{svc.port()};
  slow.send("GET /v0/openapi.json HTTP/1.1\r\nHost: x\r\n");
  CHECK(slow.wait_closed(10000));
}

TEST_CASE("every request leaves one JSON access-log line without the token", "[http][logs]") {
  test_service svc;
  auto token = read_token();
  auto before = access_log()->lines().size();
  auto r = http_request(svc.port(), "GET", "/v0/content-lake/resources/res_logged",
                        {{"Authorization", "Bearer " + token}, {"X-Request-Id", "log-check-1"}});
  REQUIRE(r);
  auto lines = access_log()->lines();
  REQUIRE(lines.size() == before + 1);
  auto line = json::parse(lines.back()).as_object();
  CHECK(line.at("request_id").as_string() == "log-check-1");
  CHECK(line.at("method").as_string() == "GET");
  CHECK(line.at("route").as_string() == "/v0/content-lake/resources/{id}");
  CHECK(line.at("status").as_int64() == 403);
  CHECK(line.at("tenant").as_string() == "t_test");
  CHECK(line.at("client_id").as_string() == "a_testapp");
  CHECK(line.at("latency_ms").is_double());
  for (const auto& l : lines) {
    CHECK(l.find(token.substr(token.size() - 30)) == std::string::npos);
    CHECK(l.find("res_logged") == std::string::npos);  // templates, not raw paths
  }
}

TEST_CASE("Expect: 100-continue gets an interim 100 before the body is sent", "[http]") {
  test_service svc;
  connection c{svc.port()};
  c.send("POST /v0/content-lake/resources/res_x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  auto interim = c.read_response();
  REQUIRE(interim);
  CHECK(interim->status == 100);
  c.send("hello");
  auto r = c.read_response();
  REQUIRE(r);
  CHECK(r->status == 405);
}
