// Spec 5.4: sensitive human-only operations (granting or taking away the owner role, writing
// commercial terms) need a person's recent sign-in: a stale one is 401 AUTH_STALE with the RFC 9470
// step-up challenge, an application is 403 HUMAN_REQUIRED, and nothing is stored or changed.

#include "tests/support/http_client.hpp"
#include "tests/support/json_response.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string everything =
  "content-lake.read content-lake.write contracts.read contracts.write contracts.commercial.read";

/// A token of t_test for `sub` with every scope; `signed_in_ago` seconds since its sign-in
/// (negative: no auth_time claim at all).
std::string token_for(const std::string& sub, std::int64_t signed_in_ago = 0) {
  auto c = valid_claims(sub);
  json::array scopes;
  for (const char* s : {"content-lake.read", "content-lake.write", "contracts.read", "contracts.write",
                        "contracts.commercial.read"})
    scopes.emplace_back(s);
  c["scopes"] = std::move(scopes);
  if (sub.rfind("u_", 0) == 0) {
    if (signed_in_ago < 0) c.erase("auth_time");
    else c["auth_time"] = unix_now() - signed_in_ago;
  }
  return make_token(c);
}

using headers = std::vector<std::pair<std::string, std::string>>;

std::optional<http_response> send(unsigned short port, const std::string& method, const std::string& path,
                                  const std::string& token, const std::string& body = {}, const headers& extra = {}) {
  headers h = {{"Authorization", "Bearer " + token}};
  if (!body.empty()) h.emplace_back("Content-Type", "application/json");
  h.insert(h.end(), extra.begin(), extra.end());
  return http_request(port, method, path, h, body);
}

std::string create_resource(unsigned short port, const std::string& token) {
  auto r = post_json(port, "/v0/content-lake/resources", token,
                     R"({"title":"T","type":"DOCUMENT","language":"en","content":{"format":"cl.content/1","blocks":[]}})");
  REQUIRE(r);
  REQUIRE(r->status == 201);
  return std::string{json_object_of(r).at("id").as_string()};
}

void check_stale(const std::optional<http_response>& r, int max_age = 900) {
  REQUIRE(r);
  INFO(r->body);
  CHECK(r->status == 401);
  CHECK(reason_of(*r) == "AUTH_STALE");
  auto challenge = r->header("www-authenticate");
  CHECK(challenge.rfind("Bearer ", 0) == 0);
  CHECK(challenge.find(R"(error="insufficient_user_authentication")") != std::string::npos);
  CHECK(challenge.find("max_age=" + std::to_string(max_age)) != std::string::npos);
}

std::string contract_body(const std::string& work, const std::string& extra) {
  return R"({"title":"Rights","status":"ACTIVE","valid_from":"2020-01-01T00:00:00Z","work_ids":[")" + work + "\"]" + extra + "}";
}

}  // namespace

TEST_CASE("granting or taking away the owner role needs a recent sign-in of a person", "[sign-in][access]") {
  test_service svc;
  auto port = svc.port();
  auto fresh = token_for("u_alice");
  auto stale = token_for("u_alice", 1000);
  auto id = create_resource(port, fresh);
  auto grant = "/v0/content-lake/resources/" + id + "/access/u_bob";

  // Granting owner: refused while stale, nothing stored under the key, fine after signing in again.
  check_stale(send(port, "PUT", grant, stale, R"({"role":"owner"})", {{"Idempotency-Key", "grant-bob-owner"}}));
  CHECK(send(port, "GET", grant, fresh)->status == 404);
  auto granted = send(port, "PUT", grant, fresh, R"({"role":"owner"})", {{"Idempotency-Key", "grant-bob-owner"}});
  CHECK(granted->status == 201);
  CHECK(granted->header("idempotent-replayed").empty());
  // A lesser role is not sensitive.
  CHECK(send(port, "PUT", "/v0/content-lake/resources/" + id + "/access/u_carol", stale, R"({"role":"writer"})")->status
        == 201);
  // Taking owner away, by downgrade or revocation: refused while stale, then allowed.
  check_stale(send(port, "PUT", grant, stale, R"({"role":"reader"})"));
  check_stale(send(port, "DELETE", grant, stale));
  CHECK(json_object_of(send(port, "GET", grant, fresh)).at("role").as_string() == "owner");
  CHECK(send(port, "DELETE", grant, fresh)->status == 204);
  // A person's token that does not say when they signed in is stale.
  check_stale(send(port, "PUT", grant, token_for("u_alice", -1), R"({"role":"owner"})"));

  // An application may own Resources but may not hand ownership on.
  auto robot = token_for("a_robot");
  auto owned = create_resource(port, robot);
  auto refused = send(port, "PUT", "/v0/content-lake/resources/" + owned + "/access/u_bob", robot, R"({"role":"owner"})");
  CHECK(refused->status == 403);
  CHECK(reason_of(*refused) == "HUMAN_REQUIRED");
  CHECK(refused->header("www-authenticate").empty());
  CHECK(send(port, "PUT", "/v0/content-lake/resources/" + owned + "/access/u_bob", robot, R"({"role":"reader"})")->status
        == 201);
}

TEST_CASE("writing commercial terms needs a recent sign-in of a person; carrying them forward does not",
          "[sign-in][contracts]") {
  test_service svc;
  auto port = svc.port();
  auto fresh = token_for("u_alice");
  auto stale = token_for("u_alice", 1000);
  auto work = std::string{json_object_of(post_json(port, "/v0/content-lake/works", fresh, R"({"title":"W"})")).at("id").as_string()};
  auto commercial = R"(,"commercial_terms":{"royalties":[{"rate_percent":10,"basis":"LIST_PRICE"}]})";

  check_stale(send(port, "POST", "/v0/contracts", stale, contract_body(work, commercial)));
  auto robot = send(port, "POST", "/v0/contracts", token_for("a_robot"), contract_body(work, commercial));
  CHECK(robot->status == 403);
  CHECK(reason_of(*robot) == "HUMAN_REQUIRED");
  CHECK(json_object_of(get_with_token(port, "/v0/contracts", fresh)).at("contracts").as_array().empty());
  // Terms without commercial ones are not sensitive.
  CHECK(send(port, "POST", "/v0/contracts", stale, contract_body(work, ""))->status == 201);

  auto created = json_object_of(send(port, "POST", "/v0/contracts", fresh, contract_body(work, commercial)));
  auto id = std::string{created.at("id").as_string()};
  auto versions = "/v0/contracts/" + id + "/versions";
  auto token_of = [&](const json::object& c) { return std::string{c.at("update_token").as_string()}; };
  // The same commercial terms (members in another order) are not a write of commercial terms.
  auto same = send(port, "POST", versions, stale,
                   contract_body(work, R"(,"commercial_terms":{"royalties":[{"basis":"LIST_PRICE","rate_percent":10}]},)"
                                       R"("update_token":")" + token_of(created) + "\""));
  REQUIRE(same->status == 201);
  // Changing them is; the refusal is not stored under the key and leaves the contract as it was.
  auto change = contract_body(work, R"(,"commercial_terms":{"royalties":[{"rate_percent":12}]},"update_token":")"
                                      + token_of(json_object_of(same)) + "\"");
  check_stale(send(port, "POST", versions, stale, change, {{"Idempotency-Key", "royalty-12"}}));
  auto latest = json_object_of(get_with_token(port, "/v0/contracts/" + id, fresh));
  CHECK(latest.at("version").as_int64() == 2);
  auto changed = send(port, "POST", versions, fresh, change, {{"Idempotency-Key", "royalty-12"}});
  REQUIRE(changed->status == 201);
  CHECK(json_object_of(changed).at("commercial_terms").at_pointer("/royalties/0/rate_percent").to_number<double>() == 12);
  CHECK(changed->header("idempotent-replayed").empty());
}

TEST_CASE("the recent sign-in window is auth.recent_sign_in_seconds", "[sign-in][config]") {
  test_service svc([](cl::config::settings& s) { s.auth.recent_sign_in_seconds = 60; });
  auto port = svc.port();
  auto fresh = token_for("u_alice");
  auto id = create_resource(port, fresh);
  auto grant = "/v0/content-lake/resources/" + id + "/access/u_bob";
  check_stale(send(port, "PUT", grant, token_for("u_alice", 120), R"({"role":"owner"})"), 60);
  CHECK(send(port, "PUT", grant, token_for("u_alice", 30), R"({"role":"owner"})")->status == 201);
}
