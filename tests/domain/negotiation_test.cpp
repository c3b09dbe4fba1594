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
