// Resources: create (staged or attached), read with rights, ETag/304, field masks, validation,
// tenancy and durability.

#include "domain/principal.hpp"
#include "domain/records.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <future>
#include <regex>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string rw_scopes = "content-lake.read content-lake.write";

std::string chapter(const std::string& extra = "") {
  return R"({"title":"Spring tides","type":"CHAPTER","language":"en",)"
         R"("content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
         R"("children":[{"type":"span","text":"Seven metres at Brest."}]}]})"
         + extra + "}";
}

json::object error_of(const http_response& r) {
  return json::parse(r.body).as_object().at("error").as_object();
}

json::object without_resolved_at(json::object o) {
  o["rights"].as_object().erase("resolved_at");
  return o;
}

}  // namespace

TEST_CASE("a staged Resource is created with every spec 2.2 field and unusable rights", "[resources]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto r = post_json(svc.port(), "/v0/content-lake/resources", token,
                chapter(R"(,"source":{"name":"Upload","origin_type":"UPLOAD","system":"cms"},"tooling":["spell-1"])"));
  REQUIRE(r);
  REQUIRE(r->status == 201);
  auto res = json::parse(r->body).as_object();
  std::string id{res.at("id").as_string()}, version{res.at("version").as_string()};
  CHECK(id.rfind("res_", 0) == 0);
  CHECK(version.rfind("ver_", 0) == 0);
  CHECK_FALSE(res.contains("work_id"));
  CHECK(res.at("uri").as_string() == "cl://t_test/CHAPTER/" + id + "/" + version);
  CHECK(std::regex_match(std::string{res.at("hash").as_string()}, std::regex{"sha256:[0-9a-f]{64}"}));
  CHECK(std::regex_match(std::string{res.at("hash_content").as_string()}, std::regex{"sha256:[0-9a-f]{64}"}));
  CHECK(std::string{res.at("source_id").as_string()}.rfind("src_", 0) == 0);
  const auto& rights = res.at("rights").as_object();
  CHECK(rights.at("usable").as_bool() == false);
  for (const char* list : {"contracts", "territorial_rights", "manifestation_rights", "usage_terms", "handling_terms", "basis"})
    CHECK(rights.at(list).as_array().empty());
  CHECK(rights.contains("resolved_at"));
  CHECK(r->header("location") == "/v0/content-lake/resources/" + id);
  CHECK(r->header("etag") == "\"" + std::string{res.at("hash").as_string()} + "\"");

  auto read = get_with_token(svc.port(), "/v0/content-lake/resources/" + id, token);
  REQUIRE(read);
  CHECK(read->status == 200);
  CHECK(read->header("etag") == r->header("etag"));
  CHECK(read->header("cache-control") == "private, max-age=1");
  CHECK(without_resolved_at(json::parse(read->body).as_object()) == without_resolved_at(res));
}

TEST_CASE("If-None-Match with the hash answers 304 (single, list, weak, *)", "[resources][etag]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto created = post_json(svc.port(), "/v0/content-lake/resources", token, chapter());
  REQUIRE(created);
  REQUIRE(created->status == 201);
  auto id = std::string{json::parse(created->body).as_object().at("id").as_string()};
  auto etag = created->header("etag");
  auto conditional = [&](const std::string& value) {
    auto r = http_request(svc.port(), "GET", "/v0/content-lake/resources/" + id,
                          {{"Authorization", "Bearer " + token}, {"If-None-Match", value}});
    REQUIRE(r);
    return *r;
  };
  auto not_modified = conditional(etag);
  CHECK(not_modified.status == 304);
  CHECK(not_modified.body.empty());
  CHECK(not_modified.header("etag") == etag);
  CHECK(conditional("\"sha256:0000\", " + etag).status == 304);
  CHECK(conditional("W/" + etag).status == 304);
  CHECK(conditional("*").status == 304);
  CHECK(conditional("\"sha256:0000\"").status == 200);
}

TEST_CASE("a field mask returns only the named fields; unknown paths are 400 with details", "[resources][fields]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto created = post_json(svc.port(), "/v0/content-lake/resources", token, chapter());
  REQUIRE(created);
  auto id = std::string{json::parse(created->body).as_object().at("id").as_string()};
  auto r = get_with_token(svc.port(), "/v0/content-lake/resources/" + id + "?fields=title,rights.usable", token);
  REQUIRE(r);
  REQUIRE(r->status == 200);
  auto body = json::parse(r->body).as_object();
  CHECK(body.size() == 2);
  CHECK(body.at("title").as_string() == "Spring tides");
  CHECK(body.at("rights").as_object().size() == 1);
  auto all = get_with_token(svc.port(), "/v0/content-lake/resources/" + id + "?fields=*", token);
  REQUIRE(all);
  CHECK(json::parse(all->body).as_object().contains("content"));
  auto bad = get_with_token(svc.port(), "/v0/content-lake/resources/" + id + "?fields=title,royalties", token);
  REQUIRE(bad);
  CHECK(bad->status == 400);
  auto e = error_of(*bad);
  CHECK(e.at("reason").as_string() == "INVALID_ARGUMENT");
  REQUIRE(e.at("details").as_array().size() == 1);
  CHECK(std::string{e.at("details").as_array()[0].as_object().at("description").as_string()}.find("royalties")
        != std::string::npos);
}

TEST_CASE("content that breaks a rule is 400 with the rule's reason and the JSON path", "[resources][content]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto body = chapter();
  auto bad_type = std::regex_replace(body, std::regex{R"("type":"paragraph")"}, R"("type":"video")");
  auto r = post_json(svc.port(), "/v0/content-lake/resources", token, bad_type);
  REQUIRE(r);
  CHECK(r->status == 400);
  auto e = error_of(*r);
  CHECK(e.at("reason").as_string() == "PCF003");
  CHECK(e.at("domain").as_string() == "contentlake.service.com");
  CHECK(e.at("details").as_array()[0].as_object().at("field").as_string() == "/content/blocks/0/type");
  auto bad_mark = std::regex_replace(body, std::regex{R"("text":"Seven metres at Brest.")"},
                                     R"("text":"x","marks":["sparkle"])");
  r = post_json(svc.port(), "/v0/content-lake/resources", token, bad_mark);
  REQUIRE(r);
  CHECK(error_of(*r).at("reason").as_string() == "PCF007");
  r = post_json(svc.port(), "/v0/content-lake/resources", token, R"({"title":"t","type":"DOCUMENT","language":"en"})");
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(error_of(*r).at("details").as_array()[0].as_object().at("field").as_string() == "/content");
  r = post_json(svc.port(), "/v0/content-lake/resources", token,
           std::regex_replace(body, std::regex{R"("language":"en")"}, R"("language":"English")"));
  REQUIRE(r);
  CHECK(error_of(*r).at("details").as_array()[0].as_object().at("field").as_string() == "/language");
}

TEST_CASE("an attached Resource names an existing Work; agents must exist", "[resources][works]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto work = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"The Tides of Brittany"})");
  REQUIRE(work);
  REQUIRE(work->status == 201);
  std::string work_id{json::parse(work->body).as_object().at("id").as_string()};
  auto r = post_json(svc.port(), "/v0/content-lake/resources", token, chapter(R"(,"work_id":")" + work_id + "\""));
  REQUIRE(r);
  REQUIRE(r->status == 201);
  CHECK(json::parse(r->body).as_object().at("work_id").as_string() == work_id);

  auto missing = post_json(svc.port(), "/v0/content-lake/resources", token, chapter(R"(,"work_id":"wk_nothere")"));
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(error_of(*missing).at("reason").as_string() == "WORK_NOT_FOUND");

  auto unknown_agent = post_json(svc.port(), "/v0/content-lake/resources", token, chapter(R"(,"agents":["agt_nobody"])"));
  REQUIRE(unknown_agent);
  CHECK(unknown_agent->status == 400);
  CHECK(error_of(*unknown_agent).at("details").as_array()[0].as_object().at("field").as_string() == "/agents/0");

  // An agent exists once its principal has written: bob writes, then alice names bob's agent.
  auto bob = token_with(rw_scopes, "t_test", "u_bob");
  REQUIRE(post_json(svc.port(), "/v0/content-lake/works", bob, R"({"title":"Bob's"})")->status == 201);
  cl::domain::principal bob_p;
  bob_p.tenant_id = "t_test";
  bob_p.subject = "u_bob";
  auto bob_agent = cl::domain::derived_agent(bob_p).id;
  auto with_bob = post_json(svc.port(), "/v0/content-lake/resources", token, chapter(R"(,"agents":[")" + bob_agent + "\"]"));
  REQUIRE(with_bob);
  CHECK(with_bob->status == 201);
}

TEST_CASE("another tenant's Resource is 403 ACCESS_DENIED, like an id that names nothing; a Source links by id",
          "[resources][tenancy]") {
  test_service svc;
  auto mine = token_with(rw_scopes, "t_test");
  auto theirs = token_with(rw_scopes, "t_other");
  auto r = post_json(svc.port(), "/v0/content-lake/resources", theirs,
                chapter(R"(,"source":{"name":"Feed","origin_type":"FEED","system":"wire"})"));
  REQUIRE(r);
  REQUIRE(r->status == 201);
  auto res = json::parse(r->body).as_object();
  std::string id{res.at("id").as_string()}, source{res.at("source_id").as_string()};
  auto foreign = get_with_token(svc.port(), "/v0/content-lake/resources/" + id, mine);
  REQUIRE(foreign);
  CHECK(foreign->status == 403);
  CHECK(error_of(*foreign).at("reason").as_string() == "ACCESS_DENIED");
  // Nothing tells it from an id that exists nowhere: no existence oracle across tenants.
  auto nowhere = get_with_token(svc.port(), "/v0/content-lake/resources/res_nowhere", mine);
  REQUIRE(nowhere);
  CHECK(nowhere->status == 403);
  CHECK(error_of(*nowhere).at("reason").as_string() == "ACCESS_DENIED");
  CHECK(error_of(*nowhere).at("message").as_string().find("or it does not exist") != std::string::npos);
  CHECK(error_of(*foreign).at("message").as_string().find("or it does not exist") != std::string::npos);
  auto linked = post_json(svc.port(), "/v0/content-lake/resources", theirs, chapter(R"(,"source_id":")" + source + "\""));
  REQUIRE(linked);
  CHECK(linked->status == 201);
  CHECK(json::parse(linked->body).as_object().at("source_id").as_string() == source);
  auto other_tenant_source = post_json(svc.port(), "/v0/content-lake/resources", mine, chapter(R"(,"source_id":")" + source + "\""));
  REQUIRE(other_tenant_source);
  CHECK(other_tenant_source->status == 400);
}

TEST_CASE("Resources survive a stop and start with the same hash", "[resources][restart]") {
  temp_dir data;
  auto token = token_with(rw_scopes);
  std::string id, etag, body;
  {
    test_service svc{[&](cl::config::settings& s) { s.data_dir = data.path; }};
    auto r = post_json(svc.port(), "/v0/content-lake/resources", token, chapter());
    REQUIRE(r);
    REQUIRE(r->status == 201);
    id = std::string{json::parse(r->body).as_object().at("id").as_string()};
    etag = r->header("etag");
    body = r->body;
    CHECK(svc.stop_and_wait() == 0);
  }
  test_service again{[&](cl::config::settings& s) { s.data_dir = data.path; }};
  auto r = get_with_token(again.port(), "/v0/content-lake/resources/" + id, token);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->header("etag") == etag);
  CHECK(without_resolved_at(json::parse(r->body).as_object()) == without_resolved_at(json::parse(body).as_object()));
}

TEST_CASE("content negotiation: NDJSON streamed per block, Markdown, 406", "[resources][negotiation]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  std::string body = R"({"title":"Tides","type":"DOCUMENT","language":"en","content":{"format":"cl.content/1","blocks":[)"
              R"({"type":"heading","key":"h1","level":2,"children":[{"type":"span","text":"Neap tides"}]},)"
              R"({"type":"paragraph","key":"p1","mark_defs":[{"key":"e1","type":"entity","entity_id":"ent_moon",)"
              R"("entity_type":"PLACE"}],"children":[{"type":"span","text":"The Moon","marks":["e1","strong"]}]},)"
              R"x({"type":"code","key":"c1","text":"tide()"}]}})x";
  auto created = post_json(svc.port(), "/v0/content-lake/resources", token, body);
  REQUIRE(created);
  REQUIRE(created->status == 201);
  auto id = std::string{json::parse(created->body).as_object().at("id").as_string()};
  auto path = "/v0/content-lake/resources/" + id;
  auto get = [&](std::vector<std::pair<std::string, std::string>> headers, const std::string& query = "") {
    headers.emplace_back("Authorization", "Bearer " + token);
    auto r = http_request(svc.port(), "GET", path + query, headers);
    REQUIRE(r);
    return *r;
  };

  auto nd = get({{"Accept", "application/x-ndjson"}});
  CHECK(nd.status == 200);
  CHECK(nd.header("content-type") == "application/x-ndjson");
  CHECK(nd.header("transfer-encoding") == "chunked");
  CHECK(nd.chunks == 3);  // one chunk per block: streamed, not built whole
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = nd.body.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(nd.body.substr(start, end - start));
  REQUIRE(lines.size() == 3);
  CHECK(json::parse(lines[0]).as_object().at("key").as_string() == "h1");
  CHECK(json::parse(lines[2]).as_object().at("type").as_string() == "code");
  CHECK(nd.body.find("\"rights\"") == std::string::npos);  // blocks only
  CHECK(get({}, "?format=ndjson").body == nd.body);

  auto md = get({{"Accept", "text/markdown"}});
  CHECK(md.status == 200);
  CHECK(md.header("content-type").rfind("text/markdown", 0) == 0);
  CHECK(md.body.find("## Neap tides\n") == 0);
  CHECK(md.body.find("**The Moon**") != std::string::npos);
  CHECK(md.body.find("ent_moon") == std::string::npos);  // no entity overlay
  CHECK(md.body.find("```\ntide()\n```") != std::string::npos);

  auto none = get({{"Accept", "image/png"}});
  CHECK(none.status == 406);
  CHECK(error_of(none).at("reason").as_string() == "NOT_ACCEPTABLE");
  CHECK(get({{"Accept", "application/json"}}).header("content-type") == "application/json");
  CHECK(get({{"Accept", "text/markdown"}}, "?fields=title").status == 400);
  // Keep-alive still works after a chunked answer.
  connection c{svc.port()};
  auto first = c.request("GET", path + "?format=ndjson", {{"Authorization", "Bearer " + token}});
  REQUIRE(first);
  auto second = c.request("GET", path, {{"Authorization", "Bearer " + token}});
  REQUIRE(second);
  CHECK(second->status == 200);
}

TEST_CASE("listing Resources filters by work, type, language and staging, with rights", "[resources][list]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto work = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"W"})");
  REQUIRE(work);
  std::string work_id{json::parse(work->body).as_object().at("id").as_string()};
  REQUIRE(post_json(svc.port(), "/v0/content-lake/resources", token, chapter())->status == 201);
  REQUIRE(post_json(svc.port(), "/v0/content-lake/resources", token, chapter(R"(,"work_id":")" + work_id + "\""))->status == 201);
  auto german = std::regex_replace(chapter(), std::regex{R"("language":"en")"}, R"("language":"de")");
  REQUIRE(post_json(svc.port(), "/v0/content-lake/resources", token, german)->status == 201);
  REQUIRE(post_json(svc.port(), "/v0/content-lake/resources", token_with(rw_scopes, "t_other"), chapter())->status == 201);
  auto count = [&](const std::string& query) {
    auto r = get_with_token(svc.port(), "/v0/content-lake/resources" + query, token);
    REQUIRE(r);
    REQUIRE(r->status == 200);
    auto items = json::parse(r->body).as_object().at("resources").as_array();
    for (const auto& item : items) {
      CHECK(item.as_object().contains("rights"));
      CHECK(item.as_object().contains("hash"));
    }
    return items.size();
  };
  CHECK(count("") == 3);
  CHECK(count("?work_id=" + work_id) == 1);
  CHECK(count("?staged=true") == 2);
  CHECK(count("?staged=false") == 1);
  CHECK(count("?language=de") == 1);
  CHECK(count("?type=CHAPTER&language=en") == 2);
  CHECK(count("?type=DOCUMENT") == 0);
  auto bad = get_with_token(svc.port(), "/v0/content-lake/resources?staged=maybe", token);
  REQUIRE(bad);
  CHECK(bad->status == 400);
  auto first = json::parse(get_with_token(svc.port(), "/v0/content-lake/resources?page_size=2", token)->body).as_object();
  CHECK(first.at("resources").as_array().size() == 2);
  REQUIRE(first.contains("next_page_token"));
  auto rest = json::parse(get_with_token(svc.port(), "/v0/content-lake/resources?page_size=2&page_token="
                                                       + std::string{first.at("next_page_token").as_string()}, token)
                            ->body)
                .as_object();
  CHECK(rest.at("resources").as_array().size() == 1);
  CHECK_FALSE(rest.contains("next_page_token"));
}

TEST_CASE("concurrent edits of the title alone with one update_token: exactly one wins", "[resources][update]") {
  // The version stays put through a title edit: what decides is the update_token. On PostgreSQL
  // several writer lanes commit at once; the cluster test found four winners of twenty before the
  // write's compare-and-set looked at the row rather than the version.
  test_service svc;
  auto token = token_with(rw_scopes);
  auto created = post_json(svc.port(), "/v0/content-lake/resources", token, chapter());
  REQUIRE(created);
  auto v0 = json::parse(created->body).as_object();
  std::string path = "/v0/content-lake/resources/" + std::string{v0.at("id").as_string()};
  std::string update_token{v0.at("update_token").as_string()};
  std::vector<std::future<std::optional<http_response>>> edits;
  for (int i = 0; i < 20; ++i)
    edits.push_back(std::async(std::launch::async, [&, i] {
      return http_request(svc.port(), "PATCH", path,
                          {{"Authorization", "Bearer " + token}, {"Content-Type", "application/merge-patch+json"}},
                          R"({"title":"Edit )" + std::to_string(i) + R"(","update_token":")" + update_token + "\"}");
    }));
  std::vector<std::string> winners;
  int stale = 0;
  for (auto& e : edits) {
    auto r = e.get();
    REQUIRE(r);
    if (r->status == 200) winners.emplace_back(json::parse(r->body).at("title").as_string());
    else if (r->status == 409 && reason_of(*r) == "TOKEN_MISMATCH") ++stale;
  }
  CHECK(winners.size() == 1);
  CHECK(stale == 19);
  auto now = get_with_token(svc.port(), path, token);
  REQUIRE(now);
  REQUIRE(winners.size() == 1);
  CHECK(json::parse(now->body).at("title").as_string() == winners.front());
}

TEST_CASE("PUT and PATCH need the current update_token; hash_content moves only with content", "[resources][update]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto created = post_json(svc.port(), "/v0/content-lake/resources", token, chapter());
  REQUIRE(created);
  auto v0 = json::parse(created->body).as_object();
  std::string id{v0.at("id").as_string()};
  auto path = "/v0/content-lake/resources/" + id;
  auto send = [&](const std::string& method, const std::string& body, const std::string& type = "application/json") {
    auto r = http_request(svc.port(), method, path, {{"Authorization", "Bearer " + token}, {"Content-Type", type}}, body);
    REQUIRE(r);
    return *r;
  };
  auto token_of = [](const json::object& o) { return std::string{o.at("update_token").as_string()}; };

  // PATCH the title only: content, hash_content and version stay.
  auto patched = send("PATCH", R"({"title":"Neap tides","update_token":")" + token_of(v0) + "\"}",
                      "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  auto v1 = json::parse(patched.body).as_object();
  CHECK(v1.at("title").as_string() == "Neap tides");
  CHECK(v1.at("hash_content") == v0.at("hash_content"));
  CHECK(v1.at("version") == v0.at("version"));
  CHECK(v1.at("hash") != v0.at("hash"));
  CHECK(token_of(v1) != token_of(v0));
  CHECK(patched.header("etag") == "\"" + std::string{v1.at("hash").as_string()} + "\"");

  // The old token is stale now.
  auto stale = send("PATCH", R"({"title":"Lost update","update_token":")" + token_of(v0) + "\"}");
  CHECK(stale.status == 409);
  CHECK(error_of(stale).at("reason").as_string() == "TOKEN_MISMATCH");
  CHECK(json::parse(get_with_token(svc.port(), path, token)->body).as_object().at("title").as_string() == "Neap tides");

  // PUT with new content: hash_content, version and uri change.
  auto replaced = send("PUT", std::regex_replace(chapter(), std::regex{"Seven metres at Brest."}, "Eight metres.")
                                .insert(1, R"("update_token":")" + token_of(v1) + "\","));
  REQUIRE(replaced.status == 200);
  auto v2 = json::parse(replaced.body).as_object();
  CHECK(v2.at("hash_content") != v1.at("hash_content"));
  CHECK(v2.at("version") != v1.at("version"));
  CHECK(v2.at("uri") != v1.at("uri"));
  CHECK(v2.at("title").as_string() == "Spring tides");
  CHECK(v2.at("created") == v0.at("created"));

  // Refusals: no token, invalid content, fields that move elsewhere, unknown Resource.
  CHECK(send("PUT", chapter()).status == 400);
  auto bad_content = send("PATCH", R"({"content":{"blocks":[{"type":"heading","key":"h","level":9,"children":[{"type":"span","text":"x"}]}]},"update_token":")"
                                     + token_of(v2) + "\"}");
  CHECK(bad_content.status == 400);
  CHECK(error_of(bad_content).at("reason").as_string() == "PCF006");
  CHECK(send("PATCH", R"({"work_id":"wk_x","update_token":")" + token_of(v2) + "\"}").status == 400);
  auto missing = http_request(svc.port(), "PATCH", "/v0/content-lake/resources/res_none",
                              {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
                              R"({"title":"x","update_token":"upd_x"})");
  REQUIRE(missing);
  CHECK(missing->status == 403);
  CHECK(error_of(*missing).at("reason").as_string() == "ACCESS_DENIED");
  auto foreign = http_request(svc.port(), "PATCH", path,
                              {{"Authorization", "Bearer " + token_with(rw_scopes, "t_other")}, {"Content-Type", "application/json"}},
                              R"({"title":"x","update_token":")" + token_of(v2) + "\"}");
  REQUIRE(foreign);
  CHECK(foreign->status == 403);
}

TEST_CASE("a read repeated after a write shows the write at once, in JSON, Markdown and by version", "[resources][cache]") {
  // Reads that repeat reuse their rendering (actors/representation_cache.hpp); what they answer
  // must still be the Resource as it is now.
  test_service svc;
  auto token = token_with(rw_scopes);
  auto v0 = json::parse(post_json(svc.port(), "/v0/content-lake/resources", token, chapter())->body).as_object();
  std::string id{v0.at("id").as_string()}, first_version{v0.at("version").as_string()};
  auto path = "/v0/content-lake/resources/" + id;
  auto fetch = [&](const std::string& suffix, const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    std::vector<std::pair<std::string, std::string>> headers{{"Authorization", "Bearer " + token}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    auto r = http_request(svc.port(), "GET", path + suffix, headers);
    REQUIRE(r);
    return *r;
  };
  for (int i = 0; i < 2; ++i) {  // the second time from the cache
    CHECK(fetch("").body.find("Spring tides") != std::string::npos);
    CHECK(fetch("", {{"Accept", "text/markdown"}}).body.find("Seven metres at Brest.") != std::string::npos);
  }
  auto before = fetch("");
  auto changed = http_request(svc.port(), "PATCH", path, {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
                              R"({"title":"Neap tides","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"n","children":[{"type":"span","text":"Two metres at neap."}]}]},"update_token":")"
                                + std::string{v0.at("update_token").as_string()} + "\"}");
  REQUIRE(changed);
  REQUIRE(changed->status == 200);
  auto after = fetch("");
  CHECK(json::parse(after.body).as_object().at("title").as_string() == "Neap tides");
  CHECK(after.header("etag") == changed->header("etag"));
  CHECK(after.header("etag") != before.header("etag"));
  CHECK(fetch("", {{"If-None-Match", before.header("etag")}}).status == 200);
  CHECK(fetch("", {{"If-None-Match", after.header("etag")}}).status == 304);
  auto md = fetch("", {{"Accept", "text/markdown"}}).body;
  CHECK(md.find("Two metres at neap.") != std::string::npos);
  CHECK(md.find("Seven metres") == std::string::npos);
  // The first version, read by its id, and the current one do not take each other's place.
  CHECK(json::parse(fetch("?version=" + first_version).body).as_object().at("title").as_string() == "Spring tides");
  CHECK(json::parse(fetch("").body).as_object().at("title").as_string() == "Neap tides");
  CHECK(json::parse(fetch("?version=" + first_version).body).as_object().at("title").as_string() == "Spring tides");
}

TEST_CASE("snapshots keep a version readable after the content moves on", "[resources][versions]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto v0 = json::parse(post_json(svc.port(), "/v0/content-lake/resources", token, chapter())->body).as_object();
  std::string id{v0.at("id").as_string()}, first_version{v0.at("version").as_string()};
  auto path = "/v0/content-lake/resources/" + id;
  auto again = post_json(svc.port(), path + "/versions", token, "{}");
  REQUIRE(again);
  CHECK(again->status == 200);  // created with the Resource already
  auto changed = http_request(svc.port(), "PATCH", path, {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
                              R"({"content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"n","children":[{"type":"span","text":"new"}]}]},"update_token":")"
                                + std::string{v0.at("update_token").as_string()} + "\"}");
  REQUIRE(changed);
  REQUIRE(changed->status == 200);
  std::string second_version{json::parse(changed->body).as_object().at("version").as_string()};
  REQUIRE(second_version != first_version);
  auto snap = post_json(svc.port(), path + "/versions", token, "");
  REQUIRE(snap);
  CHECK(snap->status == 201);
  CHECK(snap->header("location") == path + "?version=" + second_version);

  auto old = get_with_token(svc.port(), path + "?version=" + first_version, token);
  REQUIRE(old);
  CHECK(old->status == 200);
  auto old_body = json::parse(old->body).as_object();
  CHECK(old_body.at("version").as_string() == first_version);
  CHECK(old_body.at("content") == v0.at("content"));
  CHECK(old_body.contains("rights"));
  auto list = get_with_token(svc.port(), path + "/versions", token);
  REQUIRE(list);
  auto versions = json::parse(list->body).as_object().at("versions").as_array();
  CHECK(versions.size() == 2);
  for (const auto& v : versions) CHECK_FALSE(v.as_object().contains("content"));
  auto unknown = get_with_token(svc.port(), path + "?version=ver_none", token);
  REQUIRE(unknown);
  CHECK(unknown->status == 404);
  CHECK(error_of(*unknown).at("reason").as_string() == "VERSION_NOT_FOUND");
  auto no_resource = post_json(svc.port(), "/v0/content-lake/resources/res_none/versions", token, "{}");
  REQUIRE(no_resource);
  CHECK(no_resource->status == 403);
  CHECK(get_with_token(svc.port(), "/v0/content-lake/resources/res_none/versions", token)->status == 403);
}

TEST_CASE("content units address each top-level block", "[resources][units]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto body = R"({"title":"U","type":"DOCUMENT","language":"en","content":{"format":"cl.content/1","blocks":[)"
              R"({"type":"heading","key":"h","level":1,"children":[{"type":"span","text":"One"}]},)"
              R"({"type":"paragraph","key":"p","children":[{"type":"span","text":"Two"}]},)"
              R"({"type":"paragraph","key":"q","children":[{"type":"span","text":"Three"}]}]}})";
  auto res = json::parse(post_json(svc.port(), "/v0/content-lake/resources", token, body)->body).as_object();
  std::string id{res.at("id").as_string()};
  auto first = get_with_token(svc.port(), "/v0/content-lake/content-units?resource_id=" + id + "&page_size=2", token);
  REQUIRE(first);
  REQUIRE(first->status == 200);
  auto page = json::parse(first->body).as_object();
  auto units = page.at("content_units").as_array();
  REQUIRE(units.size() == 2);
  CHECK(units[0].as_object().at("block_key").as_string() == "h");
  CHECK(units[1].as_object().at("position").as_int64() == 1);
  CHECK(units[0].as_object().at("version") == res.at("version"));
  auto rest = json::parse(get_with_token(svc.port(), "/v0/content-lake/content-units?resource_id=" + id + "&page_token="
                                                       + std::string{page.at("next_page_token").as_string()}, token)
                            ->body)
                .as_object();
  REQUIRE(rest.at("content_units").as_array().size() == 1);
  CHECK_FALSE(rest.contains("next_page_token"));
  std::string unit_id{units[1].as_object().at("id").as_string()};
  CHECK(unit_id.rfind("cu_", 0) == 0);
  auto one = get_with_token(svc.port(), "/v0/content-lake/content-units/" + unit_id, token);
  REQUIRE(one);
  CHECK(one->status == 200);
  CHECK(json::parse(one->body).as_object().at("block").as_object().at("key").as_string() == "p");
  CHECK(get_with_token(svc.port(), "/v0/content-lake/content-units/cu_garbage", token)->status == 404);
  CHECK(get_with_token(svc.port(), "/v0/content-lake/content-units", token)->status == 400);
  auto foreign = get_with_token(svc.port(), "/v0/content-lake/content-units/" + unit_id, token_with(rw_scopes, "t_other"));
  REQUIRE(foreign);
  CHECK(foreign->status == 403);
}

TEST_CASE("the OpenAPI request examples for creating Works and Resources are accepted as they are", "[openapi]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto doc = json::parse(http_request(svc.port(), "GET", "/v0/openapi.json")->body).as_object();
  auto example = [&](const char* path) {
    return json::serialize(doc.at("paths").as_object().at(path).as_object().at("post").as_object().at("requestBody")
                             .as_object().at("content").as_object().at("application/json").as_object().at("example"));
  };
  auto work = post_json(svc.port(), "/v0/content-lake/works", token, example("/v0/content-lake/works"));
  REQUIRE(work);
  CHECK(work->status == 201);
  auto resource = post_json(svc.port(), "/v0/content-lake/resources", token, example("/v0/content-lake/resources"));
  REQUIRE(resource);
  INFO(resource->body);
  CHECK(resource->status == 201);
}
