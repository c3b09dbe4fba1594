// Text the stores key on or compare is taken as it came or refused, the same on every backend
// (this suite runs on LMDB and on PostgreSQL, whose text ends at U+0000): a token claim with a
// control character is 401 TOKEN_INVALID; a path, query or body value with U+0000 (or a path or
// query value that is not UTF-8) is 400 INVALID_ARGUMENT naming it. Nothing is ever cut into
// another tenant, principal or client.

#include "tests/support/http_client.hpp"
#include "tests/support/json_response.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string all_scopes =
  "content-lake.read content-lake.write contracts.read contracts.write webhooks.read webhooks.write";

/// A token for `tenant`/`sub`/`client_id`, signed by the trusted issuer (any bytes in the claims).
std::string token_for(const std::string& tenant, const std::string& sub, const std::string& client_id) {
  auto c = valid_claims("u_alice");
  c["tenant_id"] = json::string{tenant};
  c["sub"] = json::string{sub};
  c["client_id"] = json::string{client_id};
  json::array scopes;
  for (auto s : {"content-lake.read", "content-lake.write", "contracts.read", "contracts.write", "webhooks.read",
                 "webhooks.write"})
    scopes.emplace_back(s);
  c["scopes"] = std::move(scopes);
  return make_token(c);
}

std::string id_of(const std::optional<http_response>& r) {
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status / 100 == 2);
  return std::string{json_object_of(r).at("id").as_string()};
}

/// The `field` of the first entry of `error.details`.
std::string detail_field(const http_response& r) {
  auto body = json::parse(r.body).as_object();
  const auto& details = body.at("error").as_object().at("details").as_array();
  if (details.empty()) return {};
  return std::string{details[0].as_object().at("field").as_string()};
}

void expect_invalid(const std::optional<http_response>& r, const std::string& field) {
  REQUIRE(r);
  INFO(r->body);
  CHECK(r->status == 400);
  CHECK(reason_of(*r) == "INVALID_ARGUMENT");
  CHECK(detail_field(*r) == field);
}

std::optional<http_response> send(unsigned short port, const std::string& method, const std::string& target,
                                  const std::string& token, const std::string& body = {},
                                  std::vector<std::pair<std::string, std::string>> headers = {}) {
  headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
  return http_request(port, method, target, headers, body);
}

}  // namespace

TEST_CASE("a token claim with U+0000 or another control character is refused, never cut to another identity", "[text]") {
  test_service svc;
  auto port = svc.port();
  auto bars = token_for("t_bars", "u_alice", "a_app");
  auto work = id_of(post_json(port, "/v0/content-lake/works", bars, R"({"title":"Bars"})"));
  auto resource = id_of(post_json(
    port, "/v0/content-lake/resources", bars,
    R"({"title":"R","type":"DOCUMENT","language":"en","work_id":")" + work
      + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"x"}]}]}})"));
  auto keyed = send(port, "POST", "/v0/content-lake/works", bars, R"({"title":"Keyed"})", {{"Idempotency-Key", "key-1"}});
  REQUIRE(keyed);
  REQUIRE(keyed->status == 201);

  const std::string nul{"\0", 1};
  for (const std::string& control : {nul, std::string{"\x01"}, std::string{"\x7f"}, std::string{"\xc2\x9f"}}) {
    std::vector<std::string> hostile = {
      token_for("t_bars" + control + "evil", "u_alice", "a_app"),
      token_for("t_bars", "u_alice" + control + "mallory", "a_app"),
      token_for("t_bars", "u_alice", "a_app" + control + "x"),
    };
    for (const auto& token : hostile) {
      for (const auto& target : {std::string{"/v0/content-lake/works"}, "/v0/content-lake/works/" + work,
                                 "/v0/content-lake/resources/" + resource, std::string{"/v0/contracts"}}) {
        INFO(target);
        auto r = get_with_token(port, target, token);
        REQUIRE(r);
        CHECK(r->status == 401);
        CHECK(reason_of(*r) == "TOKEN_INVALID");
        CHECK(r->body.find("Bars") == std::string::npos);
      }
      auto grant = send(port, "PUT", "/v0/content-lake/resources/" + resource + "/access/u_mallory", token,
                        R"({"role":"owner"})");
      REQUIRE(grant);
      CHECK(grant->status == 401);
      auto replay = send(port, "POST", "/v0/content-lake/works", token, R"({"title":"Keyed"})",
                         {{"Idempotency-Key", "key-1"}});
      REQUIRE(replay);
      CHECK(replay->status == 401);
      CHECK(replay->header("idempotent-replayed").empty());
    }
  }
  // Mallory holds no grant: the refused PUTs stored none.
  auto mallory = token_for("t_bars", "u_mallory", "a_app");
  auto read = get_with_token(port, "/v0/content-lake/resources/" + resource, mallory);
  REQUIRE(read);
  CHECK(read->status == 403);
}

TEST_CASE("a path, query or body value with U+0000 is a 400 naming it, on every backend", "[text]") {
  test_service svc;
  auto port = svc.port();
  auto token = token_with(all_scopes);
  auto work = id_of(post_json(port, "/v0/content-lake/works", token, R"({"title":"W"})"));
  auto resource = id_of(post_json(
    port, "/v0/content-lake/resources", token,
    R"({"title":"R","type":"DOCUMENT","language":"en","work_id":")" + work
      + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"x"}]}]}})"));

  // Ids from paths: U+0000, and bytes that are not UTF-8.
  for (const std::string& bad : {std::string{"%00"}, std::string{"%FF"}, std::string{"%C3%28"}}) {
    INFO(bad);
    expect_invalid(get_with_token(port, "/v0/content-lake/resources/" + resource + bad, token), "{id}");
    expect_invalid(get_with_token(port, "/v0/content-lake/works/" + work + bad, token), "{id}");
    expect_invalid(get_with_token(port, "/v0/contracts/ctr_x" + bad, token), "{id}");
    expect_invalid(send(port, "PUT", "/v0/content-lake/resources/" + resource + "/access/u_bob" + bad, token,
                        R"({"role":"reader"})"),
                   "{principal}");
    expect_invalid(send(port, "DELETE", "/v0/content-lake/resources/" + resource + "/access/u_bob" + bad, token),
                   "{principal}");
    expect_invalid(get_with_token(port, "/v0/content-lake/webhooks/whk_x" + bad, token), "{id}");
    // Query values.
    expect_invalid(get_with_token(port, "/v0/content-lake/activities?type=ADAPTATION" + bad, token), "type");
    expect_invalid(get_with_token(port, "/v0/content-lake/works?page_token=x" + bad, token), "page_token");
  }

  // A path parameter longer than any key the service makes: refused the same on every backend.
  expect_invalid(get_with_token(port, "/v0/content-lake/works/wk_" + std::string(300, 'x'), token), "{id}");
  expect_invalid(send(port, "PUT", "/v0/content-lake/resources/" + resource + "/access/u_" + std::string(300, 'x'), token,
                      R"({"role":"reader"})"),
                 "{principal}");
  // A Work id in a body longer than LMDB keeps is a Work that cannot exist, not a store failure.
  auto long_work = post_json(port, "/v0/content-lake/resources", token,
                             R"({"title":"R","type":"DOCUMENT","language":"en","work_id":"wk_)" + std::string(600, 'x')
                               + R"(","content":{"format":"cl.content/1","blocks":[]}})");
  REQUIRE(long_work);
  CHECK(long_work->status / 100 == 4);
  CHECK(reason_of(*long_work) != "BACKEND_UNAVAILABLE");

  // Body members that become keys or columns: a Work id, a contract's Works, a webhook's URL, a
  // search session id; and a member name.
  expect_invalid(post_json(port, "/v0/content-lake/resources", token,
                           R"({"title":"R","type":"DOCUMENT","language":"en","work_id":")" + work
                             + R"(\u0000x","content":{"format":"cl.content/1","blocks":[]}})"),
                 "/work_id");
  expect_invalid(post_json(port, "/v0/contracts", token,
                           R"({"title":"C","valid_from":"2020-01-01T00:00:00Z","work_ids":[")" + work + R"(\u0000"]})"),
                 "/work_ids/0");
  expect_invalid(post_json(port, "/v0/content-lake/works", token, R"({"title":"a\u0000b"})"), "/title");
  expect_invalid(post_json(port, "/v0/content-lake/webhooks", token,
                           R"({"url":"https://example.com/\u0000","event_types":["work.created"]})"),
                 "/url");
  expect_invalid(post_json(port, "/v0/content-lake/search", token, R"({"search_id":"srch_\u0000"})"), "/search_id");
  expect_invalid(post_json(port, "/v0/content-lake/works", token, R"({"ti\u0000tle":"x"})"), "/ti");
  // Content text keeps its own rule (the content format's PCF005), with its JSON Pointer.
  auto content = post_json(port, "/v0/content-lake/resources", token,
                           R"({"title":"R","type":"DOCUMENT","language":"en","content":{"format":"cl.content/1",)"
                           R"("blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"a\u0000b"}]}]}})");
  REQUIRE(content);
  CHECK(content->status == 400);
  CHECK(reason_of(*content) == "PCF005");

  // The records named without the NUL are untouched, and nothing cut was stored.
  auto grants = get_with_token(port, "/v0/content-lake/resources/" + resource + "/access", token);
  REQUIRE(grants);
  CHECK(grants->status == 200);
  CHECK(grants->body.find("u_bob") == std::string::npos);
  auto works = get_with_token(port, "/v0/content-lake/works", token);
  REQUIRE(works);
  CHECK(json_object_of(works).at("works").as_array().size() == 1);
}
