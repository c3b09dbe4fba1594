// Access grants (layer 2) end to end: the creator owns, others need a grant (direct or through a
// group from the directory file), every read path and list applies it, and the three 403s differ.

#include "app/access_group.hpp"
#include "app/service.hpp"
#include "storage/stores.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/json_response.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <fstream>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string rw = "content-lake.read content-lake.write";

json::object error_body(const std::optional<http_response>& r) {
  return json_object_of(r).at("error").as_object();
}

/// Everyone of tenant t_test: alice creates, the others start with nothing.
struct team {
  test_service svc;
  std::string alice = token_with(rw, "t_test", "u_alice");
  std::string bob = token_with(rw, "t_test", "u_bob");
  std::string carol = token_with(rw, "t_test", "u_carol");
  std::string robot = token_with(rw, "t_test", "a_robot");

  explicit team(const std::function<void(cl::config::settings&)>& tweak = {}) : svc(tweak) {}
  unsigned short port() { return svc.port(); }

  std::string create(const std::string& title) {
    auto r = post_json(port(), "/v0/content-lake/resources", alice,
                       R"({"title":")" + title
                         + R"(","type":"CHAPTER","language":"en","content":{"format":"cl.content/1","blocks":[)"
                           R"({"type":"paragraph","key":"p1","children":[{"type":"span","text":"Tides","marks":["e1"]}],)"
                           R"("mark_defs":[{"key":"e1","type":"entity","entity_id":"ent_moon","entity_type":"PLACE"}]}]}})");
    REQUIRE(r);
    REQUIRE(r->status == 201);
    return std::string{json_object_of(r).at("id").as_string()};
  }

  std::optional<http_response> grant(const std::string& token, const std::string& id, const std::string& principal,
                                     const std::string& role) {
    return http_request(port(), "PUT", "/v0/content-lake/resources/" + id + "/access/" + principal,
                        {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
                        R"({"role":")" + role + "\"}");
  }

  std::optional<http_response> revoke(const std::string& token, const std::string& id, const std::string& principal) {
    return http_request(port(), "DELETE", "/v0/content-lake/resources/" + id + "/access/" + principal,
                        {{"Authorization", "Bearer " + token}});
  }

  int read(const std::string& token, const std::string& id) {
    auto r = get_with_token(port(), "/v0/content-lake/resources/" + id, token);
    REQUIRE(r);
    return r->status;
  }

  std::optional<http_response> patch_title(const std::string& token, const std::string& id, const std::string& title) {
    auto current = json_object_of(get_with_token(port(), "/v0/content-lake/resources/" + id, alice));
    return http_request(port(), "PATCH", "/v0/content-lake/resources/" + id,
                        {{"Authorization", "Bearer " + token}, {"Content-Type", "application/merge-patch+json"}},
                        R"({"title":")" + title + R"(","update_token":")"
                          + std::string{current.at("update_token").as_string()} + "\"}");
  }
};

std::vector<std::string> ids_in(const std::optional<http_response>& r, const char* collection) {
  std::vector<std::string> out;
  auto body = json_object_of(r);
  for (const auto& item : body.at(collection).as_array())
    out.emplace_back(item.as_object().at("id").as_string());
  return out;
}

}  // namespace

TEST_CASE("the creator owns a new Resource; a colleague without a grant is refused as if it did not exist",
          "[access]") {
  team t;
  auto id = t.create("Spring tides");
  auto grants = json_object_of(get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/access", t.alice));
  REQUIRE(grants.at("grants").as_array().size() == 1);
  auto owner = grants.at("grants").as_array()[0].as_object();
  CHECK(owner.at("principal").as_string() == "u_alice");
  CHECK(owner.at("role").as_string() == "owner");
  CHECK(owner.at("granted_by").as_string() == "u_alice");
  CHECK(owner.at("resource_id").as_string() == id);

  // Same tenant, same scopes, no grant: 403 ACCESS_DENIED, worded exactly as for an unknown id.
  auto denied = get_with_token(t.port(), "/v0/content-lake/resources/" + id, t.bob);
  REQUIRE(denied);
  CHECK(denied->status == 403);
  auto e = error_body(denied);
  CHECK(e.at("reason").as_string() == "ACCESS_DENIED");
  CHECK(e.at("domain").as_string() == "contentlake.service.com");
  CHECK(e.at("code").as_string() == "PERMISSION_DENIED");
  auto unknown = error_body(get_with_token(t.port(), "/v0/content-lake/resources/res_00000000000000000000000000000", t.bob));
  auto strip = [](std::string m, const std::string& id) { return m.replace(m.find(id), id.size(), "<id>"); };
  CHECK(strip(std::string{e.at("message").as_string()}, id)
        == strip(std::string{unknown.at("message").as_string()}, "res_00000000000000000000000000000"));
  // An application of the tenant is no different.
  CHECK(t.read(t.robot, id) == 403);
  // Every other path of the Resource too.
  for (const auto& path : {"/v0/content-lake/resources/" + id + "/versions", "/v0/content-lake/resources/" + id + "/entities",
                           "/v0/content-lake/content-units?resource_id=" + id, "/v0/content-lake/resources/" + id + "/access",
                           "/v0/content-lake/resources/" + id + "?fields=title,provenance"}) {
    INFO(path);
    auto r = get_with_token(t.port(), path, t.bob);
    REQUIRE(r);
    CHECK(r->status == 403);
    CHECK(reason_of(*r) == "ACCESS_DENIED");
  }
  auto snapshot = post_json(t.port(), "/v0/content-lake/resources/" + id + "/versions", t.bob, "{}");
  REQUIRE(snapshot);
  CHECK(snapshot->status == 403);
  auto patch = t.patch_title(t.bob, id, "Mine now");
  REQUIRE(patch);
  CHECK(patch->status == 403);
  CHECK(reason_of(*patch) == "ACCESS_DENIED");
  CHECK(t.grant(t.bob, id, "u_bob", "owner")->status == 403);  // no self-service
  CHECK(json_object_of(get_with_token(t.port(), "/v0/content-lake/resources/" + id, t.alice)).at("title").as_string()
        == "Spring tides");
}

TEST_CASE("roles: reader reads, writer also writes, owner also manages grants", "[access]") {
  team t;
  auto id = t.create("Neap tides");
  auto granted = t.grant(t.alice, id, "u_bob", "reader");
  REQUIRE(granted);
  CHECK(granted->status == 201);
  CHECK(granted->header("location") == "/v0/content-lake/resources/" + id + "/access/u_bob");
  auto g = json_object_of(granted);
  CHECK(g.at("role").as_string() == "reader");
  CHECK(g.at("granted_by").as_string() == "u_alice");

  // reader: every read path, but no write and no grant management.
  CHECK(t.read(t.bob, id) == 200);
  CHECK(get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/entities", t.bob)->status == 200);
  CHECK(get_with_token(t.port(), "/v0/content-lake/content-units?resource_id=" + id, t.bob)->status == 200);
  CHECK(get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/versions", t.bob)->status == 200);
  auto own = get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/access/u_bob", t.bob);
  REQUIRE(own);
  CHECK(own->status == 200);
  CHECK(json_object_of(own).at("role").as_string() == "reader");
  auto others = get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/access/u_alice", t.bob);
  REQUIRE(others);
  CHECK(others->status == 403);
  CHECK(get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/access", t.bob)->status == 403);
  auto patch = t.patch_title(t.bob, id, "Bob's title");
  REQUIRE(patch);
  CHECK(patch->status == 403);
  CHECK(reason_of(*patch) == "ACCESS_DENIED");
  CHECK(error_body(patch).at("message").as_string().find("writer") != std::string::npos);

  // writer: the same PUT replaces the grant (200), and the next request may write.
  auto upgraded = t.grant(t.alice, id, "u_bob", "writer");
  REQUIRE(upgraded);
  CHECK(upgraded->status == 200);
  patch = t.patch_title(t.bob, id, "Bob's title");
  REQUIRE(patch);
  CHECK(patch->status == 200);
  // A title change keeps the content's version, snapshotted at creation: 200, not 403.
  CHECK(post_json(t.port(), "/v0/content-lake/resources/" + id + "/versions", t.bob, "{}")->status == 200);
  CHECK(t.grant(t.bob, id, "u_carol", "reader")->status == 403);

  // owner: manages grants.
  CHECK(t.grant(t.alice, id, "u_bob", "owner")->status == 200);
  CHECK(t.grant(t.bob, id, "u_carol", "reader")->status == 201);
  auto list = json_object_of(get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/access", t.bob));
  std::vector<std::string> principals;
  for (const auto& item : list.at("grants").as_array()) principals.emplace_back(item.as_object().at("principal").as_string());
  CHECK(principals == std::vector<std::string>{"u_alice", "u_bob", "u_carol"});
}

TEST_CASE("a revoked grant stops working on the next request; revoking twice is GRANT_NOT_FOUND", "[access]") {
  team t;
  auto id = t.create("Ebb");
  REQUIRE(t.grant(t.alice, id, "u_bob", "reader")->status == 201);
  // Warm the role cache, then revoke: the very next read is refused.
  for (int i = 0; i < 3; ++i) REQUIRE(t.read(t.bob, id) == 200);
  auto revoked = t.revoke(t.alice, id, "u_bob");
  REQUIRE(revoked);
  CHECK(revoked->status == 204);
  CHECK(revoked->body.empty());
  CHECK(t.read(t.bob, id) == 403);
  auto again = t.revoke(t.alice, id, "u_bob");
  REQUIRE(again);
  CHECK(again->status == 404);
  CHECK(reason_of(*again) == "GRANT_NOT_FOUND");
  auto missing = get_with_token(t.port(), "/v0/content-lake/resources/" + id + "/access/u_bob", t.alice);
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(reason_of(*missing) == "GRANT_NOT_FOUND");
  // Downgrading a writer takes effect at once too.
  REQUIRE(t.grant(t.alice, id, "u_bob", "writer")->status == 201);
  REQUIRE(t.patch_title(t.bob, id, "Flood")->status == 200);
  REQUIRE(t.grant(t.alice, id, "u_bob", "reader")->status == 200);
  CHECK(t.patch_title(t.bob, id, "Ebb again")->status == 403);
}

TEST_CASE("a Resource always keeps an owner", "[access]") {
  team t;
  auto id = t.create("Slack water");
  auto demote = t.grant(t.alice, id, "u_alice", "writer");
  REQUIRE(demote);
  CHECK(demote->status == 400);
  CHECK(reason_of(*demote) == "LAST_OWNER");
  CHECK(error_body(demote).at("code").as_string() == "FAILED_PRECONDITION");
  auto leave = t.revoke(t.alice, id, "u_alice");
  REQUIRE(leave);
  CHECK(leave->status == 400);
  CHECK(reason_of(*leave) == "LAST_OWNER");
  CHECK(t.read(t.alice, id) == 200);
  // With a second owner, the first may leave; then it has no access either.
  REQUIRE(t.grant(t.alice, id, "u_bob", "owner")->status == 201);
  CHECK(t.revoke(t.alice, id, "u_alice")->status == 204);
  CHECK(t.read(t.alice, id) == 403);
  CHECK(t.read(t.bob, id) == 200);
}

TEST_CASE("grant requests are validated: principal shape, role, body", "[access]") {
  team t;
  auto id = t.create("Bore");
  for (const auto& bad : {"x_nobody", "u_", "u_has%20space"}) {
    INFO(bad);
    auto r = t.grant(t.alice, id, bad, "reader");
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(reason_of(*r) == "INVALID_ARGUMENT");
  }
  auto role = t.grant(t.alice, id, "u_bob", "admin");
  REQUIRE(role);
  CHECK(role->status == 400);
  CHECK(error_body(role).at("details").as_array()[0].as_object().at("field").as_string() == "/role");
  auto extra = http_request(t.port(), "PUT", "/v0/content-lake/resources/" + id + "/access/u_bob",
                            {{"Authorization", "Bearer " + t.alice}, {"Content-Type", "application/json"}},
                            R"({"role":"reader","expires":"never"})");
  REQUIRE(extra);
  CHECK(extra->status == 400);
  // Nothing was granted by any of them.
  CHECK(t.read(t.bob, id) == 403);
  // Managing grants needs the write scope (layer 1 before layer 2).
  auto read_only = t.grant(token_with("content-lake.read", "t_test", "u_alice"), id, "u_bob", "reader");
  REQUIRE(read_only);
  CHECK(read_only->status == 403);
  CHECK(reason_of(*read_only) == "SCOPE_MISSING");
}

TEST_CASE("groups come from the directory file, are re-read when it changes, and never from the token",
          "[access][groups]") {
  temp_dir dir;
  auto file = dir.path + "/directory.json";
  auto write_directory = [&](const std::string& members) {
    std::ofstream out{file + ".tmp"};
    out << R"({"version":"v)" << members.size() << R"(","groups":[{"id":"g_tides","tenant_id":"t_test","members":[)"
        << members << R"(]},{"id":"g_tides","tenant_id":"t_other","members":["u_carol"]}]})";
    out.close();
    std::rename((file + ".tmp").c_str(), file.c_str());
  };
  write_directory(R"("u_carol","a_robot")");
  team t{[&](cl::config::settings& s) { s.groups.get<cl::app::access_settings>().directory_file = file; }};
  auto id = t.create("Tidal range");
  auto unknown = t.grant(t.alice, id, "g_tidez", "reader");
  REQUIRE(unknown);
  CHECK(unknown->status == 400);
  CHECK(reason_of(*unknown) == "INVALID_ARGUMENT");
  REQUIRE(t.grant(t.alice, id, "g_tides", "writer")->status == 201);
  CHECK(t.read(t.carol, id) == 200);
  CHECK(t.read(t.robot, id) == 200);
  CHECK(t.patch_title(t.carol, id, "Range")->status == 200);  // the group's role
  CHECK(t.read(t.bob, id) == 403);
  // A member of a same-named group of another tenant gets nothing here.
  CHECK(t.read(token_with(rw, "t_other", "u_carol"), id) == 403);
  // A token claiming groups changes nothing.
  auto c = valid_claims("u_bob");
  c["scopes"] = json::array{"content-lake.read"};
  c["groups"] = json::array{"g_tides"};
  CHECK(t.read(make_token(c), id) == 403);
  // Carol leaves the group: without a write to the store, her access ends once the file is re-read.
  write_directory(R"("a_robot")");
  CHECK(eventually([&] { return t.read(t.carol, id) == 403; }));
  CHECK(t.read(t.robot, id) == 200);
  // An invalid file keeps the directory in force.
  {
    std::ofstream out{file};
    out << R"({"version":"broken","groups":[{"id":"tides"}]})";
  }
  CHECK(t.read(t.robot, id) == 200);
}

TEST_CASE("lists show only what the caller may read; an Activity about a hidden Resource does not exist",
          "[access][lists]") {
  team t;
  auto shared = t.create("Shared");
  auto hidden = t.create("Hidden");
  REQUIRE(t.grant(t.alice, shared, "u_bob", "reader")->status == 201);
  auto alice_sees = ids_in(get_with_token(t.port(), "/v0/content-lake/resources", t.alice), "resources");
  CHECK(alice_sees.size() == 2);
  CHECK(ids_in(get_with_token(t.port(), "/v0/content-lake/resources", t.bob), "resources")
        == std::vector<std::string>{shared});
  CHECK(ids_in(get_with_token(t.port(), "/v0/content-lake/resources", t.carol), "resources").empty());
  // Paging through one item at a time finds the same single item.
  std::vector<std::string> paged;
  std::string next;
  for (int i = 0; i < 10; ++i) {
    auto page = json_object_of(get_with_token(t.port(), "/v0/content-lake/resources?page_size=1" + (next.empty() ? "" : "&page_token=" + next), t.bob));
    for (const auto& item : page.at("resources").as_array()) paged.emplace_back(item.as_object().at("id").as_string());
    if (!page.contains("next_page_token")) break;
    next = std::string{page.at("next_page_token").as_string()};
  }
  CHECK(paged == std::vector<std::string>{shared});

  // Activities: alice sees both creations; bob only the shared one's.
  auto activities = [&](const std::string& token) {
    std::vector<std::string> targets;
    auto body = json_object_of(get_with_token(t.port(), "/v0/content-lake/activities", token));
    for (const auto& a : body.at("activities").as_array())
      targets.emplace_back(a.as_object().at("target").as_object().at("id").as_string());
    return targets;
  };
  auto all = activities(t.alice);
  CHECK(std::count(all.begin(), all.end(), hidden) == 1);
  auto bobs = activities(t.bob);
  CHECK(std::count(bobs.begin(), bobs.end(), shared) == 1);
  CHECK(std::count(bobs.begin(), bobs.end(), hidden) == 0);
  CHECK(get_with_token(t.port(), "/v0/content-lake/activities?resource_id=" + hidden, t.bob)->body.find(hidden)
        == std::string::npos);
  std::string hidden_activity;
  auto alice_activities = json_object_of(get_with_token(t.port(), "/v0/content-lake/activities", t.alice));
  for (const auto& a : alice_activities.at("activities").as_array())
    if (a.as_object().at("target").as_object().at("id").as_string() == hidden)
      hidden_activity = std::string{a.as_object().at("id").as_string()};
  REQUIRE_FALSE(hidden_activity.empty());
  CHECK(get_with_token(t.port(), "/v0/content-lake/activities/" + hidden_activity, t.alice)->status == 200);
  auto as_bob = get_with_token(t.port(), "/v0/content-lake/activities/" + hidden_activity, t.bob);
  REQUIRE(as_bob);
  CHECK(as_bob->status == 404);
  CHECK(reason_of(*as_bob) == "ACTIVITY_NOT_FOUND");
  auto nowhere = get_with_token(t.port(), "/v0/content-lake/activities/act_00000000000000000000000000000", t.bob);
  REQUIRE(nowhere);
  CHECK(nowhere->status == 404);
  // Activities about Works stay visible to the tenant.
  auto work = json_object_of(post_json(t.port(), "/v0/content-lake/works", t.alice, R"({"title":"Tides"})"));
  auto bob_activities = json_object_of(get_with_token(t.port(), "/v0/content-lake/activities", t.bob));
  const auto& with_work = bob_activities.at("activities").as_array();
  CHECK(std::any_of(with_work.begin(), with_work.end(), [&](const json::value& a) {
    return a.as_object().at("target").as_object().at("id").as_string() == work.at("id").as_string();
  }));
}

TEST_CASE("promotion needs the writer role on the staged Resource", "[access]") {
  team t;
  auto staged = t.create("Staged");
  auto work = json_object_of(post_json(t.port(), "/v0/content-lake/works", t.bob, R"({"title":"Bob's work"})"));
  auto path = "/v0/content-lake/works/" + std::string{work.at("id").as_string()} + "/resources";
  auto body = R"({"resource_id":")" + staged + "\"}";
  REQUIRE(t.grant(t.alice, staged, "u_bob", "reader")->status == 201);
  auto refused = post_json(t.port(), path, t.bob, body);
  REQUIRE(refused);
  CHECK(refused->status == 403);
  CHECK(reason_of(*refused) == "ACCESS_DENIED");
  REQUIRE(t.grant(t.alice, staged, "u_bob", "writer")->status == 200);
  auto promoted = post_json(t.port(), path, t.bob, body);
  REQUIRE(promoted);
  CHECK(promoted->status == 200);
}

TEST_CASE("the three authorisation layers fail distinctly", "[access][layers]") {
  team t;
  auto id = t.create("Layers");
  REQUIRE(t.grant(t.alice, id, "u_bob", "reader")->status == 201);
  // Layer 1: the token's scope.
  auto scope = get_with_token(t.port(), "/v0/content-lake/resources/" + id, token_with("content-lake.write", "t_test", "u_bob"));
  REQUIRE(scope);
  CHECK(scope->status == 403);
  CHECK(error_body(scope).at("reason").as_string() == "SCOPE_MISSING");
  CHECK(error_body(scope).at("domain").as_string() == "auth.service.com");
  // Layer 2: the grant.
  auto grant = get_with_token(t.port(), "/v0/content-lake/resources/" + id, t.carol);
  REQUIRE(grant);
  CHECK(grant->status == 403);
  CHECK(error_body(grant).at("reason").as_string() == "ACCESS_DENIED");
  CHECK(error_body(grant).at("domain").as_string() == "contentlake.service.com");
  // Layer 3: the rights (a staged Resource has no contract: no AI training).
  auto rights = http_request(t.port(), "GET", "/v0/content-lake/resources/" + id,
                             {{"Authorization", "Bearer " + t.bob}, {"X-Usage-Purpose", "AI_TRAINING"}});
  REQUIRE(rights);
  CHECK(rights->status == 403);
  auto e = error_body(rights);
  CHECK(e.at("reason").as_string() == "USAGE_PROHIBITED");
  CHECK(e.at("domain").as_string() == "contentlake.service.com");
  CHECK(e.at("details").as_array()[0].as_object().at("description").as_string().find("AI_TRAINING") != std::string::npos);
  // Layer 2 comes before layer 3: without a grant the purpose is never looked at.
  auto both = http_request(t.port(), "GET", "/v0/content-lake/resources/" + id,
                           {{"Authorization", "Bearer " + t.carol}, {"X-Usage-Purpose", "AI_TRAINING"}});
  REQUIRE(both);
  CHECK(reason_of(*both) == "ACCESS_DENIED");
  // And bob's plain read passes all three.
  CHECK(t.read(t.bob, id) == 200);
}

TEST_CASE("the change log names what each write left: the version and hash it answered, the grantee, one transaction",
          "[access][changes]") {
  team t;
  auto id = t.create("Ebb");
  auto created = json_object_of(get_with_token(t.port(), "/v0/content-lake/resources/" + id, t.alice));
  REQUIRE(t.grant(t.alice, id, "u_bob", "reader")->status == 201);
  auto patched = t.patch_title(t.alice, id, "Flood");
  REQUIRE(patched);
  REQUIRE(patched->status == 200);
  auto after = json_object_of(patched);
  REQUIRE(t.revoke(t.alice, id, "u_bob")->status == 204);
  std::vector<cl::storage::change_entry> mine;
  for (const auto& e : t.svc.service().store().read_from(0, 1000))
    if (e.id == id) mine.push_back(e);
  REQUIRE(mine.size() == 4);
  CHECK(mine[0].op == cl::storage::change_op::created);
  CHECK(mine[0].version == std::string{created.at("version").as_string()});
  CHECK(mine[0].hash == std::string{created.at("hash").as_string()});  // no contract moved its rights since
  CHECK(mine[1].op == cl::storage::change_op::granted);
  CHECK(mine[1].principal == "u_bob");
  CHECK(mine[2].op == cl::storage::change_op::patched);
  CHECK(mine[2].version == std::string{after.at("version").as_string()});
  CHECK(mine[2].hash == std::string{after.at("hash").as_string()});
  CHECK(mine[3].op == cl::storage::change_op::revoked);
  CHECK(mine[3].principal == "u_bob");
  for (const auto& e : mine) CHECK(e.transaction == e.seq);  // each write logged one entry
}
