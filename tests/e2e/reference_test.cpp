// GET /v0/docs, its Redoc bundle and the OpenAPI document: served without a token, tagged, 304 to
// a client that holds them, 406 to an Accept that excludes them, HEAD as GET without the body.
// The page in a real browser is the `api_docs` ctest (tests/client/api_docs.sh).

#include "tests/support/http_client.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/service_fixture.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

using namespace cl::testing;

namespace {

std::string pinned_bundle() {
  std::ifstream in{source_dir() + "/docs/vendor/redoc/redoc.standalone.js", std::ios::binary};
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// The nonce a policy allows styles by.
std::string policy_nonce(const std::string& policy) {
  std::smatch m;
  return std::regex_search(policy, m, std::regex{"style-src 'self' 'nonce-([A-Za-z0-9_-]+)'"}) ? m[1].str() : "";
}

}  // namespace

TEST_CASE("the reference page is served without a token, under a policy that allows only this origin", "[reference]") {
  test_service svc;
  auto page = http_request(svc.port(), "GET", "/v0/docs", {{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}});
  REQUIRE(page->status == 200);
  CHECK(page->header("content-type") == "text/html; charset=utf-8");
  auto policy = page->header("content-security-policy");
  INFO(policy);
  CHECK(policy.find("default-src 'none'") != std::string::npos);
  CHECK(policy.find("script-src 'self';") != std::string::npos);
  CHECK(policy.find("connect-src 'self';") != std::string::npos);
  CHECK(policy.find("unsafe") == std::string::npos);
  CHECK(policy.find("http") == std::string::npos);
  // The styles Redoc injects carry the nonce the page gives it; a new one in every answer.
  auto nonce = policy_nonce(policy);
  REQUIRE(nonce.size() >= 16);
  CHECK(page->body.find("<script src=\"/v0/docs/reference.js\" nonce=\"" + nonce + "\"></script>") != std::string::npos);
  auto again = http_request(svc.port(), "GET", "/v0/docs");
  REQUIRE(again->status == 200);
  CHECK(policy_nonce(again->header("content-security-policy")) != nonce);
  // Nothing from elsewhere: no absolute URL in any src or href, no inline script.
  CHECK_FALSE(std::regex_search(page->body, std::regex{R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase}));
  CHECK(page->body.find("<script>") == std::string::npos);

  // Tagged like the document: the holder of the tag gets a 304, without a policy of its own.
  auto tag = page->header("etag");
  REQUIRE(tag.rfind("W/\"", 0) == 0);
  CHECK(again->header("etag") == tag);
  auto held = http_request(svc.port(), "GET", "/v0/docs", {{"If-None-Match", tag}});
  CHECK(held->status == 304);
  CHECK(held->body.empty());
  CHECK(held->header("content-security-policy").empty());

  // HEAD answers as GET without the body; an Accept without HTML is 406 in the error shape.
  connection c{svc.port()};
  c.send("HEAD /v0/docs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto head = c.read_response(true);
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->header("etag") == tag);
  CHECK(head->header("content-type") == "text/html; charset=utf-8");
  CHECK_FALSE(head->header("content-security-policy").empty());
  CHECK(head->body.empty());
  auto json_only = http_request(svc.port(), "GET", "/v0/docs", {{"Accept", "application/json"}});
  CHECK(json_only->status == 406);
  CHECK(reason_of(*json_only) == "NOT_ACCEPTABLE");
  auto post = http_request(svc.port(), "POST", "/v0/docs", {}, "{}");
  CHECK(post->status == 405);
  CHECK(post->header("allow") == "GET, HEAD");
}

TEST_CASE("the reference's script and the OpenAPI document are the pinned bytes, tagged by their SHA-256", "[reference]") {
  test_service svc;
  auto script = http_request(svc.port(), "GET", "/v0/docs/reference.js", {{"Accept", "*/*"}});
  REQUIRE(script->status == 200);
  CHECK(script->header("content-type") == "text/javascript; charset=utf-8");
  // The pinned bundle (scripts/fetch-redoc), then the lines that start it on the page's element.
  auto bundle = pinned_bundle();
  REQUIRE(script->body.size() > bundle.size());
  CHECK(script->body.compare(0, bundle.size(), bundle) == 0);
  CHECK(script->body.find("Redoc.init('/v0/openapi.json'", bundle.size()) != std::string::npos);
  auto tag = script->header("etag");
  REQUIRE(tag.size() == 34);
  CHECK(http_request(svc.port(), "GET", "/v0/docs/reference.js", {{"If-None-Match", tag}})->status == 304);
  CHECK(http_request(svc.port(), "GET", "/v0/docs/reference.js", {{"Accept", "text/html"}})->status == 406);

  auto document = http_request(svc.port(), "GET", "/v0/openapi.json");
  REQUIRE(document->status == 200);
  auto document_tag = document->header("etag");
  REQUIRE(document_tag.size() == 34);
  CHECK(document_tag != tag);
  auto held = http_request(svc.port(), "GET", "/v0/openapi.json", {{"If-None-Match", "\"other\", " + document_tag}});
  CHECK(held->status == 304);
  CHECK(held->body.empty());
  CHECK(http_request(svc.port(), "GET", "/v0/openapi.json", {{"Accept", "text/html"}})->status == 406);
}
