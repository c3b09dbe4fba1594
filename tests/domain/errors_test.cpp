#include "domain/errors.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <set>

using namespace cl::domain;

TEST_CASE("the catalogue has one row per error id, in order, with unique reasons", "[errors]") {
  const auto& rows = catalogue();
  std::set<std::string_view> reasons;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(static_cast<std::size_t>(rows[i].id) == i);
    CHECK(reasons.insert(rows[i].reason).second);
    CHECK((rows[i].domain == auth_domain || rows[i].domain == contentlake_domain));
    CHECK(!rows[i].when.empty());
  }
  CHECK(rows.size() == static_cast<std::size_t>(error_id::internal) + 1);
}

TEST_CASE("spec 7.3 reasons have the spec's statuses and domains", "[errors]") {
  CHECK(entry(error_id::token_missing).http_status == 401);
  CHECK(entry(error_id::token_missing).domain == "auth.service.com");
  CHECK(entry(error_id::token_expired).reason == "TOKEN_EXPIRED");
  CHECK(entry(error_id::tenant_mismatch).http_status == 403);
  CHECK(entry(error_id::scope_missing).http_status == 403);
  CHECK(entry(error_id::scope_missing).domain == "auth.service.com");
  CHECK(entry(error_id::limit_exceeded).http_status == 400);
  CHECK(entry(error_id::limit_exceeded).domain == "contentlake.service.com");
  CHECK(entry(error_id::rate_limited).http_status == 429);
  CHECK(entry(error_id::backend_unavailable).http_status == 503);
}

TEST_CASE("error bodies have the spec 7.1 shape and escape their text", "[errors]") {
  api_error e{error_id::scope_missing, "needs \"content-lake.read\"\n", {{"scopes", "requires x"}}};
  auto body = render_error_body(e);
  auto v = boost::json::parse(body).as_object();
  REQUIRE(v.size() == 1);
  auto& err = v.at("error").as_object();
  CHECK(err.at("code").as_string() == "PERMISSION_DENIED");
  CHECK(err.at("reason").as_string() == "SCOPE_MISSING");
  CHECK(err.at("domain").as_string() == "auth.service.com");
  CHECK(err.at("message").as_string() == "needs \"content-lake.read\"\n");
  REQUIRE(err.at("details").as_array().size() == 1);
  CHECK(err.at("details").as_array()[0].as_object().at("field").as_string() == "scopes");
}

TEST_CASE("an error without a message uses the catalogue's text and empty details", "[errors]") {
  auto v = boost::json::parse(render_error_body(api_error{error_id::internal, "", {}})).as_object();
  CHECK(!v.at("error").as_object().at("message").as_string().empty());
  CHECK(v.at("error").as_object().at("details").as_array().empty());
}
