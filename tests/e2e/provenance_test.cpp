// Promotion (spec 3.1), Sources, Activities with derived agents (spec 5.5), the entity overlay.

#include "domain/principal.hpp"
#include "domain/records.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <set>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string rw_scopes = "content-lake.read content-lake.write";

json::object created(const std::optional<http_response>& r) {
  REQUIRE(r);
  INFO(r->body);
  REQUIRE((r->status == 201 || r->status == 200));
  return json::parse(r->body).as_object();
}

const std::string document =
  R"({"title":"Tides","type":"DOCUMENT","language":"en","content":{"format":"cl.content/1","blocks":[)"
  R"({"type":"paragraph","key":"p1","mark_defs":[{"key":"m","type":"entity","entity_id":"ent_moon","entity_type":"PLACE","label":"Moon"},)"
  R"({"key":"b","type":"entity","entity_id":"ent_brest","entity_type":"PLACE"}],)"
  R"("children":[{"type":"span","text":"The Moon","marks":["m"]},{"type":"span","text":" over "},{"type":"span","text":"Brest","marks":["b"]}]},)"
  R"({"type":"paragraph","key":"p2","mark_defs":[{"key":"m","type":"entity","entity_id":"ent_moon","entity_type":"PLACE"}],)"
  R"("children":[{"type":"span","text":"moonrise","marks":["m"]}]}]}})";

std::string with(const std::string& body, const std::string& extra) {
  return body.substr(0, body.size() - 1) + extra + "}";
}

}  // namespace

TEST_CASE("a staged Resource is promoted to a Work once; its hash changes", "[promotion]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto work = created(post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"Atlas"})"));
  std::string work_id{work.at("id").as_string()};
  auto staged_response = post_json(svc.port(), "/v0/content-lake/resources", token, document);
  auto staged = created(staged_response);
  std::string id{staged.at("id").as_string()};
  CHECK_FALSE(staged.contains("work_id"));

  auto promoted_response =
    post_json(svc.port(), "/v0/content-lake/works/" + work_id + "/resources", token, R"({"resource_id":")" + id + "\"}");
  auto promoted = created(promoted_response);
  CHECK(promoted_response->status == 200);
  CHECK(promoted.at("work_id").as_string() == work_id);
  CHECK(promoted.at("hash") != staged.at("hash"));
  CHECK(promoted.at("hash_content") == staged.at("hash_content"));
  CHECK(promoted.at("update_token") != staged.at("update_token"));
  auto read = get_with_token(svc.port(), "/v0/content-lake/resources/" + id, token);
  REQUIRE(read);
  CHECK(json::parse(read->body).as_object().at("work_id").as_string() == work_id);
  CHECK(read->header("etag") == "\"" + std::string{promoted.at("hash").as_string()} + "\"");

  auto again = post_json(svc.port(), "/v0/content-lake/works/" + work_id + "/resources", token, R"({"resource_id":")" + id + "\"}");
  REQUIRE(again);
  CHECK(again->status == 400);
  CHECK(reason_of(*again) == "RESOURCE_NOT_STAGED");
  auto no_work = post_json(svc.port(), "/v0/content-lake/works/wk_none/resources", token, R"({"resource_id":")" + id + "\"}");
  REQUIRE(no_work);
  CHECK(no_work->status == 404);
  CHECK(reason_of(*no_work) == "WORK_NOT_FOUND");
  auto no_resource =
    post_json(svc.port(), "/v0/content-lake/works/" + work_id + "/resources", token, R"({"resource_id":"res_none"})");
  REQUIRE(no_resource);
  CHECK(no_resource->status == 403);
  CHECK(reason_of(*no_resource) == "ACCESS_DENIED");
  auto bad = post_json(svc.port(), "/v0/content-lake/works/" + work_id + "/resources", token, R"({"resource":"x"})");
  REQUIRE(bad);
  CHECK(bad->status == 400);
}

TEST_CASE("a Source created with a Resource is readable; misses are 404", "[sources]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto res = created(post_json(svc.port(), "/v0/content-lake/resources", token,
                          with(document, R"(,"source":{"name":"Wire","origin_type":"FEED","system":"agency"})")));
  std::string source_id{res.at("source_id").as_string()};
  auto r = get_with_token(svc.port(), "/v0/content-lake/sources/" + source_id, token);
  REQUIRE(r);
  CHECK(r->status == 200);
  auto source = json::parse(r->body).as_object();
  CHECK(source.at("id").as_string() == source_id);
  CHECK(source.at("name").as_string() == "Wire");
  CHECK(source.at("origin_type").as_string() == "FEED");
  CHECK(source.at("system").as_string() == "agency");
  auto missing = get_with_token(svc.port(), "/v0/content-lake/sources/src_none", token);
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(reason_of(*missing) == "SOURCE_NOT_FOUND");
}

TEST_CASE("every write records an Activity by the derived agent plus named agents; tooling apart", "[activities]") {
  test_service svc;
  auto alice = token_with(rw_scopes, "t_test", "u_alice");
  auto robot = token_with(rw_scopes, "t_test", "a_robot");
  created(post_json(svc.port(), "/v0/content-lake/works", robot, R"({"title":"By the robot"})"));
  cl::domain::principal robot_p, alice_p;
  robot_p.tenant_id = alice_p.tenant_id = "t_test";
  robot_p.subject = "a_robot";
  alice_p.subject = "u_alice";
  auto robot_agent = cl::domain::derived_agent(robot_p).id;
  auto alice_agent = cl::domain::derived_agent(alice_p).id;
  auto res = created(post_json(svc.port(), "/v0/content-lake/resources", alice,
                          with(document, R"(,"agents":[")" + robot_agent
                                           + R"("],"tooling":["gpt-x-summarizer"],"activity_type":"ADAPTATION")")));
  std::string id{res.at("id").as_string()};

  auto list = get_with_token(svc.port(), "/v0/content-lake/activities?type=ADAPTATION&resource_id=" + id, alice);
  REQUIRE(list);
  REQUIRE(list->status == 200);
  auto activities = json::parse(list->body).as_object().at("activities").as_array();
  REQUIRE(activities.size() == 1);
  auto a = activities[0].as_object();
  CHECK(a.at("type").as_string() == "ADAPTATION");
  CHECK(a.at("target").as_object().at("id").as_string() == id);
  auto by = a.at("performed_by").as_array();
  REQUIRE(by.size() == 2);
  CHECK(by[0].as_string() == alice_agent);  // the derived agent first, never replaced
  CHECK(by[1].as_string() == robot_agent);
  CHECK(a.at("tooling").as_array().size() == 1);
  CHECK(a.at("tooling").as_array()[0].as_string() == "gpt-x-summarizer");

  auto one = get_with_token(svc.port(), "/v0/content-lake/activities/" + std::string{a.at("id").as_string()}, alice);
  REQUIRE(one);
  CHECK(one->status == 200);
  CHECK(json::parse(one->body).as_object() == a);

  auto all = json::parse(get_with_token(svc.port(), "/v0/content-lake/activities?page_size=1000", alice)->body).as_object();
  CHECK(all.at("activities").as_array().size() == 2);  // the Work's CREATION and the ADAPTATION
  auto creations = json::parse(get_with_token(svc.port(), "/v0/content-lake/activities?type=CREATION", alice)->body).as_object();
  REQUIRE(creations.at("activities").as_array().size() == 1);
  CHECK(creations.at("activities").as_array()[0].as_object().at("performed_by").as_array()[0].as_string() == robot_agent);
  auto bad_type = get_with_token(svc.port(), "/v0/content-lake/activities?type=DANCE", alice);
  REQUIRE(bad_type);
  CHECK(bad_type->status == 400);
  auto missing = get_with_token(svc.port(), "/v0/content-lake/activities/act_none", alice);
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(reason_of(*missing) == "ACTIVITY_NOT_FOUND");
}

TEST_CASE("activity pages follow their filters; a token is bound to them", "[activities][pagination]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  for (int i = 0; i < 4; ++i) created(post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"w"})"));
  std::set<std::string> seen;
  std::string next;
  int pages = 0;
  do {
    auto target = "/v0/content-lake/activities?type=CREATION&page_size=3" + (next.empty() ? "" : "&page_token=" + next);
    auto page = json::parse(get_with_token(svc.port(), target, token)->body).as_object();
    for (const auto& a : page.at("activities").as_array()) seen.insert(std::string{a.as_object().at("id").as_string()});
    next = page.contains("next_page_token") ? std::string{page.at("next_page_token").as_string()} : "";
    ++pages;
  } while (!next.empty() && pages < 10);
  CHECK(seen.size() == 4);
  CHECK(pages == 2);
  auto first = json::parse(get_with_token(svc.port(), "/v0/content-lake/activities?type=CREATION&page_size=3", token)->body)
                 .as_object();
  std::string token_for_creations{first.at("next_page_token").as_string()};
  auto other_filter = get_with_token(svc.port(), "/v0/content-lake/activities?page_token=" + token_for_creations, token);
  REQUIRE(other_filter);
  CHECK(other_filter->status == 400);
  CHECK(reason_of(*other_filter) == "PAGE_TOKEN_MISMATCH");
}

TEST_CASE("the entity overlay groups annotations by entity, in order of first mention", "[entities]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto res = created(post_json(svc.port(), "/v0/content-lake/resources", token, document));
  std::string id{res.at("id").as_string()};
  auto r = get_with_token(svc.port(), "/v0/content-lake/resources/" + id + "/entities", token);
  REQUIRE(r);
  REQUIRE(r->status == 200);
  auto overlay = json::parse(r->body).as_object();
  CHECK(overlay.at("resource_id").as_string() == id);
  auto entities = overlay.at("entities").as_array();
  REQUIRE(entities.size() == 2);
  auto moon = entities[0].as_object();
  CHECK(moon.at("entity_id").as_string() == "ent_moon");
  CHECK(moon.at("label").as_string() == "Moon");
  REQUIRE(moon.at("mentions").as_array().size() == 2);
  CHECK(moon.at("mentions").as_array()[1].as_object().at("block_key").as_string() == "p2");
  CHECK(moon.at("mentions").as_array()[1].as_object().at("text").as_string() == "moonrise");
  CHECK(entities[1].as_object().at("entity_id").as_string() == "ent_brest");
  CHECK_FALSE(entities[1].as_object().contains("label"));
  auto missing = get_with_token(svc.port(), "/v0/content-lake/resources/res_none/entities", token);
  REQUIRE(missing);
  CHECK(missing->status == 403);
}
