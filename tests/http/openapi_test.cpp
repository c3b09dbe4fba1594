// The OpenAPI document agrees with the router and the error catalogue.

#include "tests/support/paths.hpp"
#include "domain/errors.hpp"
#include "http/openapi.hpp"
#include "app/groups.hpp"
#include "http/router.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>

namespace json = boost::json;
using namespace cl;

namespace {

const json::object& document() {
  static const json::value doc = json::parse(http::openapi_document());
  return doc.as_object();
}

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const std::set<std::string> http_methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"};

}  // namespace

TEST_CASE("the compiled-in document is docs/openapi.json, OpenAPI 3.1", "[openapi]") {
  std::ifstream in{cl::testing::source_dir() + "/docs/openapi.json", std::ios::binary};
  REQUIRE(in);
  std::string on_disk{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  CHECK(on_disk == http::openapi_document());
  CHECK(std::string{document().at("openapi").as_string()}.rfind("3.1", 0) == 0);
}

TEST_CASE("every route is in the document and every documented operation is routed, HEAD beside each GET", "[openapi]") {
  std::set<std::pair<std::string, std::string>> routed, documented;
  for (const auto& r : app::groups().routes()) {
    routed.emplace(std::string{r.path_template}, lower(r.method));
    // The listener answers HEAD for every GET (routed as the GET): the document says so per path.
    if (r.method == "GET") routed.emplace(std::string{r.path_template}, "head");
  }
  std::set<std::pair<std::string, std::string>> refused;  // documented as answered 405 only
  for (const auto& [path, item] : document().at("paths").as_object())
    for (const auto& [method, op] : item.as_object()) {
      if (!http_methods.count(std::string{method})) continue;
      bool not_allowed = op.as_object().contains("x-method-not-allowed");
      (not_allowed ? refused : documented).emplace(std::string{path}, std::string{method});
    }
  CHECK(routed == documented);
  // A method documented as refused is one the router does not take on a path it routes (so 405).
  for (const auto& [path, method] : refused) {
    INFO(method << " " << path);
    CHECK_FALSE(routed.count({path, method}));
    CHECK(std::any_of(routed.begin(), routed.end(), [&](const auto& r) { return r.first == path; }));
    const auto& op = document().at("paths").at(path).at(method).as_object();
    CHECK(op.at("responses").as_object().contains("405"));
  }
}

TEST_CASE("paths are written in full under a server URL without a path", "[openapi]") {
  // Under /v0/, but for the protected resource metadata and TDMRep's tdmrep.json, whose paths
  // RFC 9728 and the TDMRep report fix at the host's root.
  for (const auto& [path, item] : document().at("paths").as_object())
    CHECK((std::string{path}.rfind("/v0/", 0) == 0 || path == "/.well-known/oauth-protected-resource"
           || path == "/.well-known/tdmrep.json"));
  for (const auto& server : document().at("servers").as_array()) {
    std::string url{server.as_object().at("url").as_string()};
    auto after_scheme = url.find("://");
    REQUIRE(after_scheme != std::string::npos);
    CHECK(url.find('/', after_scheme + 3) == std::string::npos);
  }
}

TEST_CASE("each operation documents its scope, or that it needs no token", "[openapi]") {
  const auto& paths = document().at("paths").as_object();
  for (const auto& r : app::groups().routes()) {
    const auto& op = paths.at(r.path_template).as_object().at(lower(r.method)).as_object();
    INFO(r.method << " " << r.path_template);
    if (r.scope.empty()) {
      REQUIRE(op.contains("security"));
      CHECK(op.at("security").as_array().empty());
    } else {
      CHECK(op.at("x-required-scope").as_string() == r.scope);
      CHECK(op.at("responses").as_object().contains("401"));
      CHECK(op.at("responses").as_object().contains("403"));
      CHECK(op.at("responses").as_object().contains("429"));
    }
    CHECK(op.at("responses").as_object().contains("503"));
  }
  const auto& scheme = document().at("components").as_object().at("securitySchemes").as_object().at("bearerAuth").as_object();
  CHECK(scheme.at("type").as_string() == "http");
  CHECK(scheme.at("scheme").as_string() == "bearer");
  CHECK(scheme.at("bearerFormat").as_string() == "JWT");
}

TEST_CASE("the document's error catalogue is the service's, reason for reason", "[openapi]") {
  const auto& listed = document().at("x-error-catalogue").as_array();
  REQUIRE(listed.size() == domain::catalogue().size());
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const auto& row = listed[i].as_object();
    const auto& e = domain::catalogue()[i];
    INFO(e.reason);
    CHECK(row.at("reason").as_string() == e.reason);
    CHECK(row.at("status").as_int64() == e.http_status);
    CHECK(row.at("code").as_string() == e.code);
    CHECK(row.at("domain").as_string() == e.domain);
  }
  auto text = std::string{http::openapi_document()};
  for (const auto& e : domain::catalogue())
    CHECK(text.find("- `" + std::string{e.reason} + "`") != std::string::npos);  // in ErrorReason's description
}

TEST_CASE("every operation with a request body carries an example", "[openapi]") {
  for (const auto& [path, item] : document().at("paths").as_object())
    for (const auto& [method, op] : item.as_object()) {
      if (!op.is_object() || !op.as_object().contains("requestBody")) continue;
      INFO(std::string{method} << " " << std::string{path});
      const auto& content = op.as_object().at("requestBody").as_object().at("content").as_object();
      for (const auto& [type, media] : content) {
        const auto& m = media.as_object();
        CHECK((m.contains("example") || m.contains("examples")));
      }
    }
}

TEST_CASE("docs/api.md lists every routed operation", "[openapi][docs]") {
  std::ifstream in{cl::testing::source_dir() + "/docs/api.md"};
  REQUIRE(in);
  std::string doc{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  for (const auto& r : app::groups().routes()) {
    INFO(r.method << " " << r.path_template);
    CHECK(doc.find("| " + std::string{r.method} + " | `" + std::string{r.path_template} + "` |") != std::string::npos);
  }
}

TEST_CASE("every operation declares the statuses any route can answer, and those its kind can", "[openapi]") {
  // Any route: a limit or malformed HTTP (400), an Accept it cannot meet (406), a Transfer-Encoding
  // other than chunked (501); one with a body: another media type (415); one with a scope: no or a
  // bad token (401), the scope or tenant (403), the rate limit (429), a late backend or the
  // connection cap (503). Each answer carries X-Request-Id, and an error Cache-Control too.
  const auto& paths = document().at("paths").as_object();
  for (const auto& [path, item] : paths)
    for (const auto& [method, value] : item.as_object()) {
      if (!http_methods.count(std::string{method})) continue;
      const auto& op = value.as_object();
      INFO(std::string{method} << " " << std::string{path});
      const auto& responses = op.at("responses").as_object();
      for (const char* status : {"400", "406", "501"}) CHECK(responses.contains(status));
      if (op.contains("requestBody")) CHECK(responses.contains("415"));
      if (op.contains("x-required-scope"))
        for (const char* status : {"401", "403", "429", "503"}) CHECK(responses.contains(status));
      for (const auto& [status, response] : responses) {
        if (status.size() != 3 || status[0] < '4') continue;
        auto r = response.as_object();
        if (r.contains("$ref")) {
          std::string ref{r.at("$ref").as_string()};
          r = document().at("components").at("responses").at(ref.substr(ref.rfind('/') + 1)).as_object();
        }
        INFO(std::string{status});
        REQUIRE(r.contains("headers"));
        CHECK(r.at("headers").as_object().contains("X-Request-Id"));
        CHECK(r.at("headers").as_object().contains("Cache-Control"));
      }
    }
}
