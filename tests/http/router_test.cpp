#include "http/router.hpp"

#include <catch2/catch.hpp>

using namespace cl::http;

namespace {

const std::vector<route>& table() {
  static const std::vector<route> routes = {
    {"GET", "/v0/content-lake/resources/{id}", "content-lake.read", nullptr, nullptr},
    {"PUT", "/v0/content-lake/resources/{id}", "content-lake.write", nullptr, nullptr},
    {"GET", "/v0/content-lake/resources/{id}/entities", "content-lake.read", nullptr, nullptr},
    {"GET", "/v0/openapi.json", "", nullptr, nullptr},
  };
  return routes;
}

}  // namespace

TEST_CASE("a route matches with its decoded path parameters", "[router]") {
  auto m = match_route(table(), "GET", "/v0/content-lake/resources/res_abc");
  REQUIRE(m.found);
  CHECK(m.found->path_template == "/v0/content-lake/resources/{id}");
  REQUIRE(m.params.size() == 1);
  CHECK(m.params[0].first == "id");
  CHECK(m.params[0].second == "res_abc");
  m = match_route(table(), "GET", "/v0/content-lake/resources/res%5Fx/entities");
  REQUIRE(m.found);
  CHECK(m.found->path_template == "/v0/content-lake/resources/{id}/entities");
  CHECK(m.params[0].second == "res_x");
}

TEST_CASE("a known path with another method lists the allowed methods", "[router]") {
  auto m = match_route(table(), "DELETE", "/v0/content-lake/resources/res_abc");
  CHECK_FALSE(m.found);
  CHECK(m.allow == "GET, HEAD, PUT");
  m = match_route(table(), "POST", "/v0/openapi.json");
  CHECK(m.allow == "GET, HEAD");
}

TEST_CASE("unknown paths, empty segments and encoded slashes do not match", "[router]") {
  CHECK_FALSE(match_route(table(), "GET", "/v0/content-lake/resources").found);
  CHECK(match_route(table(), "GET", "/v0/content-lake/resources").allow.empty());
  CHECK_FALSE(match_route(table(), "GET", "/v0/content-lake/resources/").found);
  CHECK_FALSE(match_route(table(), "GET", "/v0/content-lake/resources/a/b/c").found);
  CHECK_FALSE(match_route(table(), "GET", "/v0/content-lake/resources/a%2Fb").found);
  CHECK_FALSE(match_route(table(), "GET", "/v0/content-lake/resources/a%zz").found);
  CHECK_FALSE(match_route(table(), "GET", "/v0/content-lake/resources/a%2").found);
  CHECK_FALSE(match_route(table(), "GET", "").found);
  CHECK_FALSE(match_route(table(), "GET", "v0/openapi.json").found);
  CHECK_FALSE(match_route(table(), "GET", "/v0/content/documents/x").found);
}

TEST_CASE("percent decoding refuses a slash and a malformed escape", "[router]") {
  std::string out;
  CHECK(percent_decode_segment("a%20b", out));
  CHECK(out == "a b");
  // NUL decodes: the request's text check refuses it with a 400 that names the parameter.
  CHECK(percent_decode_segment("a%00b", out));
  CHECK(out == std::string{"a\0b", 3});
  CHECK_FALSE(percent_decode_segment("a%2", out));
  CHECK_FALSE(percent_decode_segment("a%2fb", out));
}
