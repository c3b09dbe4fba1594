// "Not yours" and "not there" answer alike on every id route: an id from another tenant gets the
// same status, reason, domain and wording as an id that exists nowhere, so no answer confirms
// that another tenant's id exists.

#include "tests/support/http_client.hpp"
#include "tests/support/json_response.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string all_scopes = "content-lake.read content-lake.write contracts.read contracts.write";

/// The error of `r` with the id it names replaced by `<id>`: what must not differ.
std::string error_shape(const std::optional<http_response>& r, const std::string& id) {
  REQUIRE(r);
  auto body = r->body;
  for (auto at = body.find(id); at != std::string::npos; at = body.find(id)) body.replace(at, id.size(), "<id>");
  return std::to_string(r->status) + " " + body;
}

std::string id_of(const std::optional<http_response>& r) {
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status / 100 == 2);
  return std::string{json_object_of(r).at("id").as_string()};
}

}  // namespace

TEST_CASE("another tenant's Work, Source, contract and Activity answer exactly like made-up ids", "[tenancy]") {
  test_service svc;
  auto port = svc.port();
  auto theirs = token_with(all_scopes, "t_other", "u_mallory");
  auto mine = token_with(all_scopes, "t_test", "u_alice");

  // Records of tenant t_other: a Work, a Resource with a new Source, a contract, Activities.
  auto work = id_of(post_json(port, "/v0/content-lake/works", theirs, R"({"title":"Theirs"})"));
  auto resource = json_object_of(post_json(
    port, "/v0/content-lake/resources", theirs,
    R"({"title":"T","type":"DOCUMENT","language":"en","source":{"name":"Feed","origin_type":"FEED","system":"x"},)"
    R"("content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"x"}]}]}})"));
  std::string source{resource.at("source_id").as_string()};
  auto contract = id_of(post_json(port, "/v0/contracts", theirs,
                                  R"({"title":"C","valid_from":"2020-01-01T00:00:00Z","work_ids":[")" + work + "\"]}"));
  auto activities = json_object_of(get_with_token(port, "/v0/content-lake/activities", theirs)).at("activities").as_array();
  REQUIRE_FALSE(activities.empty());
  std::string activity{activities[0].as_object().at("id").as_string()};

  // The owner reads each; tenant t_test gets for each what it gets for an id that exists nowhere.
  struct probe {
    std::string path_of_real, path_of_made_up, real, made_up, reason;
  };
  std::vector<probe> probes = {
    {"/v0/content-lake/works/" + work, "/v0/content-lake/works/wk_0000000000000000000000000000x", work,
     "wk_0000000000000000000000000000x", "WORK_NOT_FOUND"},
    {"/v0/content-lake/sources/" + source, "/v0/content-lake/sources/src_000000000000000000000000000x", source,
     "src_000000000000000000000000000x", "SOURCE_NOT_FOUND"},
    {"/v0/contracts/" + contract, "/v0/contracts/ctr_000000000000000000000000000x", contract,
     "ctr_000000000000000000000000000x", "CONTRACT_NOT_FOUND"},
    {"/v0/contracts/" + contract + "/versions", "/v0/contracts/ctr_000000000000000000000000000x/versions", contract,
     "ctr_000000000000000000000000000x", "CONTRACT_NOT_FOUND"},
    {"/v0/content-lake/activities/" + activity, "/v0/content-lake/activities/act_000000000000000000000000000x", activity,
     "act_000000000000000000000000000x", "ACTIVITY_NOT_FOUND"},
  };
  for (const auto& p : probes) {
    INFO(p.path_of_real);
    REQUIRE(get_with_token(port, p.path_of_real, theirs)->status == 200);
    auto foreign = get_with_token(port, p.path_of_real, mine);
    auto made_up = get_with_token(port, p.path_of_made_up, mine);
    REQUIRE(foreign);
    CHECK(foreign->status == 404);
    CHECK(reason_of(*foreign) == p.reason);
    CHECK(error_shape(foreign, p.real) == error_shape(made_up, p.made_up));
  }

  // Writes naming another tenant's records: the same answers as for ids that exist nowhere.
  auto version_of = [&](const std::string& id) {
    return post_json(port, "/v0/contracts/" + id + "/versions", mine,
                     R"({"title":"C","valid_from":"2020-01-01T00:00:00Z","work_ids":["wk_0000000000000000000000000000x"],)"
                     R"("update_token":"utk_x"})");
  };
  CHECK(version_of(contract)->status == 404);
  CHECK(error_shape(version_of(contract), contract) == error_shape(version_of("ctr_000000000000000000000000000x"),
                                                                   "ctr_000000000000000000000000000x"));
  auto promote_into = [&](const std::string& w) {
    auto staged = id_of(post_json(port, "/v0/content-lake/resources", mine,
                                  R"({"title":"S","type":"DOCUMENT","language":"en","content":{"format":"cl.content/1","blocks":[]}})"));
    return post_json(port, "/v0/content-lake/works/" + w + "/resources", mine, R"({"resource_id":")" + staged + "\"}");
  };
  auto foreign_promotion = promote_into(work);
  CHECK(foreign_promotion->status == 404);
  CHECK(reason_of(*foreign_promotion) == "WORK_NOT_FOUND");
}
