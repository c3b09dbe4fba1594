// Durability across a stop and start: everything written through the API reads back identical,
// every route and representation, byte for byte (but for `resolved_at`, the moment of reading).

#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <map>
#include <regex>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string rw_scopes = "content-lake.read content-lake.write";

std::string id_of(const std::optional<http_response>& r, int status) {
  REQUIRE(r);
  REQUIRE(r->status == status);
  return std::string{json::parse(r->body).as_object().at("id").as_string()};
}

std::string member(const std::string& body, const char* name) {
  return std::string{json::parse(body).as_object().at(name).as_string()};
}

/// What a client sees for one URL: status, ETag, body (with `resolved_at` blanked out).
struct observed {
  int status = 0;
  std::string etag;
  std::string content_type;
  std::string body;
  bool operator==(const observed& o) const {
    return status == o.status && etag == o.etag && content_type == o.content_type && body == o.body;
  }
};

observed observe(unsigned short port, const std::string& target, const std::string& token, const std::string& accept = "") {
  std::vector<std::pair<std::string, std::string>> headers{{"Authorization", "Bearer " + token}};
  if (!accept.empty()) headers.emplace_back("Accept", accept);
  auto r = http_request(port, "GET", target, headers);
  REQUIRE(r);
  static const std::regex resolved_at{R"re("resolved_at":"[^"]*")re"};
  return {r->status, r->header("etag"), r->header("content-type"),
          std::regex_replace(r->body, resolved_at, R"("resolved_at":"-")")};
}

}  // namespace

namespace {

std::string without_changes_cursor(const std::string& body) {
  static const std::regex cursor{R"(,"changes_cursor":"[^"]*")"};
  return std::regex_replace(body, cursor, "");
}

}  // namespace

TEST_CASE("everything written reads back identical after a stop and start", "[restart]") {
  temp_dir data;
  auto token = token_with(rw_scopes);
  auto use_data = [&](cl::config::settings& s) { s.data_dir = data.path; };
  std::vector<std::pair<std::string, std::string>> targets;  // (path, Accept)
  std::map<std::string, observed> before;

  {
    test_service svc{use_data};
    auto port = svc.port();
    auto work = id_of(post_json(port, "/v0/content-lake/works", token, R"({"title":"Tides","description":"A book"})"), 201);
    // A staged Resource with a new Source and an entity annotation.
    auto staged = post_json(port, "/v0/content-lake/resources", token,
                            R"({"title":"Neap tides","type":"CHAPTER","language":"en",)"
                            R"("source":{"name":"Upload","origin_type":"UPLOAD","system":"cms"},)"
                            R"("content":{"format":"cl.content/1","blocks":[)"
                            R"({"type":"heading","key":"h1","level":1,"children":[{"type":"span","text":"Neap tides"}]},)"
                            R"({"type":"paragraph","key":"p1","mark_defs":[{"key":"m1","type":"entity",)"
                            R"("entity_id":"ent_moon","entity_type":"PLACE"}],)"
                            R"("children":[{"type":"span","text":"The Moon","marks":["m1"]}]}]}})");
    auto staged_id = id_of(staged, 201);
    auto source = member(staged->body, "source_id");
    // An attached Resource, then a change, a snapshot and the promotion of the staged one.
    auto attached = post_json(port, "/v0/content-lake/resources", token,
                              R"({"title":"Spring tides","type":"CHAPTER","language":"en","work_id":")" + work
                                + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
                                  R"("children":[{"type":"span","text":"Seven metres at Brest."}]}]}})");
    auto attached_id = id_of(attached, 201);
    auto patched = http_request(port, "PATCH", "/v0/content-lake/resources/" + attached_id,
                                {{"Authorization", "Bearer " + token}, {"Content-Type", "application/merge-patch+json"}},
                                R"({"title":"Spring tides at Brest","content":{"format":"cl.content/1","blocks":[)"
                                R"({"type":"paragraph","key":"p1","children":[{"type":"span","text":"Eight metres."}]}]},)"
                                R"("update_token":")"
                                  + member(attached->body, "update_token") + "\"}");
    REQUIRE(patched);
    REQUIRE(patched->status == 200);
    auto snapshot = post_json(port, "/v0/content-lake/resources/" + attached_id + "/versions", token, "{}");
    REQUIRE(snapshot);
    REQUIRE(snapshot->status == 201);  // the content changed: a new version to snapshot
    auto version = member(snapshot->body, "version");
    auto promoted = post_json(port, "/v0/content-lake/works/" + work + "/resources", token,
                              R"({"resource_id":")" + staged_id + "\"}");
    REQUIRE(promoted);
    REQUIRE(promoted->status == 200);

    auto activities = json::parse(http_request(port, "GET", "/v0/content-lake/activities?page_size=100",
                                               {{"Authorization", "Bearer " + token}})
                                    ->body)
                        .as_object()
                        .at("activities")
                        .as_array();
    REQUIRE(activities.size() == 6);  // the Work, two creates, an update, a snapshot, a promotion
    auto units = json::parse(observe(port, "/v0/content-lake/content-units?resource_id=" + staged_id, token).body)
                   .as_object()
                   .at("content_units")
                   .as_array();
    REQUIRE(units.size() == 2);

    for (const auto& id : {staged_id, attached_id}) {
      auto base = "/v0/content-lake/resources/" + id;
      targets.insert(targets.end(), {{base, ""},
                                     {base, "application/x-ndjson"},
                                     {base, "text/markdown"},
                                     {base + "?fields=id,title,work_id,rights", ""},
                                     {base + "/versions", ""},
                                     {base + "/entities", ""},
                                     {"/v0/content-lake/content-units?resource_id=" + id, ""},
                                     {"/v0/content-lake/activities?resource_id=" + id, ""}});
    }
    targets.insert(targets.end(), {{"/v0/content-lake/resources/" + attached_id + "?version=" + version, ""},
                                   {"/v0/content-lake/resources?page_size=100", ""},
                                   {"/v0/content-lake/resources?work_id=" + work, ""},
                                   {"/v0/content-lake/works?page_size=100", ""},
                                   {"/v0/content-lake/works/" + work, ""},
                                   {"/v0/content-lake/sources/" + source, ""},
                                   {"/v0/content-lake/activities?page_size=100", ""},
                                   {"/v0/content-lake/activities?page_size=2", ""}});
    for (const auto& a : activities)
      targets.emplace_back("/v0/content-lake/activities/" + std::string{a.as_object().at("id").as_string()}, "");
    for (const auto& u : units)
      targets.emplace_back("/v0/content-lake/content-units/" + std::string{u.as_object().at("id").as_string()}, "");

    for (const auto& [path, accept] : targets) {
      auto seen = observe(port, path, token, accept);
      INFO(path << " " << accept);
      REQUIRE(seen.status == 200);
      before[path + " " + accept] = seen;
    }
    CHECK(svc.stop_and_wait() == 0);
  }

  test_service again{use_data};
  for (const auto& [path, accept] : targets) {
    INFO(path << " " << accept);
    auto after = observe(again.port(), path, token, accept);
    const auto& was = before[path + " " + accept];
    CHECK(after.status == was.status);
    CHECK(after.etag == was.etag);
    CHECK(after.content_type == was.content_type);
    // A list's changes_cursor is sealed anew at every answer (a random nonce): compared without it.
    CHECK(without_changes_cursor(after.body) == without_changes_cursor(was.body));
  }
}
