#include "domain/api_reference.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace cl::domain;

TEST_CASE("the reference page loads only this origin's script and document, with no inline script", "[reference]") {
  auto page = api_reference_page("n0nce");
  // An element with no attribute (Redoc would read each as an option, the hidden nonce as empty).
  CHECK(page.find("<redoc></redoc>") != std::string::npos);
  // Every script has a src on this origin, the nonce on its tag; no src or href names another.
  std::regex script{"<script([^>]*)>"};
  int scripts = 0;
  for (std::sregex_iterator it{page.begin(), page.end(), script}, end; it != end; ++it, ++scripts)
    CHECK((*it)[1].str() == " src=\"/v0/docs/reference.js\" nonce=\"n0nce\"");
  CHECK(scripts == 1);
  CHECK_FALSE(std::regex_search(page, std::regex{R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase}));
}

TEST_CASE("the reference's policy allows nothing outside this origin and inline styles by nonce only", "[reference]") {
  auto policy = api_reference_policy("n0nce");
  CHECK(policy.rfind("default-src 'none';", 0) == 0);
  for (const char* directive : {"script-src 'self';", "style-src 'self' 'nonce-n0nce';", "font-src 'self';",
                                "img-src 'self' data:;", "connect-src 'self';", "worker-src 'self' blob:;",
                                "frame-ancestors 'none';"})
    CHECK(policy.find(directive) != std::string::npos);
  CHECK(policy.find("unsafe") == std::string::npos);
  CHECK(policy.find("http") == std::string::npos);
  CHECK(policy.find('*') == std::string::npos);
}

TEST_CASE("the reference's script starts Redoc on the document with the nonce of its own tag", "[reference]") {
  std::string start{api_reference_start()};
  CHECK(start.find("Redoc.init('/v0/openapi.json'") != std::string::npos);
  CHECK(start.find("nonce: script.nonce") != std::string::npos);
  CHECK(start.find("document.currentScript") != std::string::npos);
  CHECK(start.find("showExtensions: ['x-required-scope']") != std::string::npos);
  CHECK(start.find("expandResponses: '200,201,202,204,302,303'") != std::string::npos);
}
