// The access-log line: one JSON object per request, escaped, latency in milliseconds.

#include "domain/access_log.hpp"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

using namespace cl::domain;

TEST_CASE("an access-log line is one JSON object with the request's facts", "[access_log]") {
  access_entry e;
  e.listener = "public";
  e.request_id = "req_1";
  e.method = "GET";
  e.route = "/v0/works/{work_id}";
  e.status = 200;
  e.seconds = 0.0123456;
  e.tenant = "t_1";
  e.client_id = "a_app";
  auto line = access_log_line(e, "2026-12-02T10:00:00.000Z");
  CHECK(line == R"({"ts":"2026-12-02T10:00:00.000Z","type":"access","listener":"public","request_id":"req_1",)"
                R"("method":"GET","route":"/v0/works/{work_id}","status":200,"latency_ms":12.346,"tenant":"t_1",)"
                R"("client_id":"a_app"})");
  e.reason = "NOT_FOUND";
  e.status = 404;
  e.seconds = 2.0;
  auto v = boost::json::parse(access_log_line(e, "x")).as_object();
  CHECK(v.at("reason").as_string() == "NOT_FOUND");
  CHECK(v.at("latency_ms").as_double() == 2000.0);
}

TEST_CASE("control characters and quotes in a claim never split or break a line", "[access_log]") {
  access_entry e;
  e.tenant = "t_1\n{\"forged\":1}";
  e.client_id = std::string_view{"a\0b\x1b", 4};
  e.method = "-";
  auto line = access_log_line(e, "ts");
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('\0') == std::string::npos);
  auto v = boost::json::parse(line).as_object();
  CHECK(v.at("tenant").as_string() == "t_1\n{\"forged\":1}");
  CHECK(v.at("client_id").as_string() == std::string_view("a\0b\x1b", 4));
  CHECK_FALSE(v.contains("reason"));
  CHECK(v.at("latency_ms").as_double() == 0.0);
}
