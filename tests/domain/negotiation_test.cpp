#include "domain/negotiation.hpp"

#include <catch2/catch.hpp>

using namespace cl::domain;

namespace {

rendering pick(std::string_view format, std::string_view accept) {
  auto r = negotiate(format, accept);
  REQUIRE(std::holds_alternative<rendering>(r));
  return std::get<rendering>(r);
}

error_id refusal(std::string_view format, std::string_view accept) {
  auto r = negotiate(format, accept);
  REQUIRE(std::holds_alternative<api_error>(r));
  return std::get<api_error>(r).id;
}

}  // namespace

TEST_CASE("JSON is the default; format wins over Accept", "[negotiation]") {
  CHECK(pick("", "") == rendering::json);
  CHECK(pick("", "*/*") == rendering::json);
  CHECK(pick("ndjson", "application/json") == rendering::ndjson);
  CHECK(pick("markdown", "") == rendering::markdown);
  CHECK(refusal("xml", "") == error_id::invalid_argument);
}

TEST_CASE("Accept picks by quality and specificity", "[negotiation]") {
  CHECK(pick("", "application/x-ndjson") == rendering::ndjson);
  CHECK(pick("", "text/markdown") == rendering::markdown);
  CHECK(pick("", "text/*") == rendering::markdown);
  CHECK(pick("", "application/*") == rendering::json);
  CHECK(pick("", "text/markdown, application/json;q=0.5") == rendering::markdown);
  CHECK(pick("", "text/markdown;q=0.2, application/x-ndjson;q=0.9") == rendering::ndjson);
  CHECK(pick("", "*/*;q=0.1, text/markdown") == rendering::markdown);
  CHECK(pick("", "application/json;q=0, */*") == rendering::ndjson);
}

TEST_CASE("nothing acceptable is NOT_ACCEPTABLE", "[negotiation]") {
  CHECK(refusal("", "image/png") == error_id::not_acceptable);
  CHECK(refusal("", "text/html, application/xml;q=0.9") == error_id::not_acceptable);
  CHECK(refusal("", "application/json;q=0") == error_id::not_acceptable);
}

TEST_CASE("an operation of one media type refuses an Accept without it, naming the type", "[negotiation]") {
  CHECK_FALSE(refuse_unless("", "text/html"));
  CHECK_FALSE(refuse_unless("text/html,application/xhtml+xml,*/*;q=0.8", "text/html"));
  CHECK_FALSE(refuse_unless("text/*", "text/javascript"));
  auto refused = refuse_unless("application/json", "text/html");
  REQUIRE(refused);
  CHECK(refused->id == error_id::not_acceptable);
  CHECK(refused->message == "This operation answers text/html only; the Accept header excludes it.");
  CHECK(refuse_unless("text/html;q=0", "text/html"));
  // The JSON rule is the same rule.
  CHECK(refuse_unless_json("text/html")->message
        == "This operation answers application/json only; the Accept header excludes it.");
}
