// Layer 3 on every path that shows content or anything derived from its text, and `rights` on
// every Resource representation. A sentinel word sits only in the content (inside an entity
// mention, so the entity overlay carries it too); no answer to a caller whose use the rights do
// not allow may contain it, whichever route or rendering is asked.

#include "domain/base64url.hpp"
#include "app/groups.hpp"
#include "http/router.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/json_response.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <set>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string sentinel = "Zebraquartz";
const std::string scopes = "content-lake.read content-lake.write contracts.read contracts.write";

using headers = std::vector<std::pair<std::string, std::string>>;

/// A Work with one Resource whose content mentions the sentinel, one snapshot, and a contract
/// with `usage` terms on the Work.
struct fixture {
  test_service svc;
  std::string token = token_with(scopes);
  std::string work, resource, version, contract, activity;
  std::string feed_start;  ///< the change feed's cursor before anything was written

  explicit fixture(const std::string& usage)
    : svc([](cl::config::settings& s) {
        s.rate_limit.requests_per_second = 1e6;  // the sweeps send hundreds of reads at once
        s.rate_limit.burst = 1e6;
      }) {
    feed_start = std::string{
      json_object_of(get_with_token(port(), "/v0/content-lake/changes", token)).at("next_cursor").as_string()};
    work = id_of(post_json(port(), "/v0/content-lake/works", token, R"({"title":"Tides"})"));
    auto created = json_object_of(post_json(
      port(), "/v0/content-lake/resources", token,
      R"({"title":"Spring tides","type":"CHAPTER","language":"en","work_id":")" + work
        + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
          R"("mark_defs":[{"key":"m1","type":"entity","entity_id":"ent_x","entity_type":"PLACE"}],)"
          R"("children":[{"type":"span","text":"Seven metres at )"
        + sentinel + R"(","marks":["m1"]}]}]}})"));
    resource = std::string{created.at("id").as_string()};
    version = std::string{created.at("version").as_string()};
    contract = id_of(post_json(port(), "/v0/contracts", token,
                               R"({"title":"Rights","status":"ACTIVE","valid_from":"2020-01-01T00:00:00Z","work_ids":[")"
                                 + work + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],"usage_terms":)"
                                 + usage + "}"));
    activity = std::string{json_object_of(get_with_token(port(), "/v0/content-lake/activities", token))
                             .at("activities")
                             .as_array()[0]
                             .as_object()
                             .at("id")
                             .as_string()};
  }

  unsigned short port() { return svc.port(); }

  static std::string id_of(const std::optional<http_response>& r) {
    REQUIRE(r);
    INFO(r->body);
    REQUIRE(r->status / 100 == 2);
    return std::string{json::parse(r->body).as_object().at("id").as_string()};
  }

  std::string unit() { return "cu_" + cl::domain::base64url_encode(resource + "/p1"); }

  std::optional<http_response> get(const std::string& target, const headers& extra = {}) {
    headers h = {{"Authorization", "Bearer " + token}};
    h.insert(h.end(), extra.begin(), extra.end());
    return http_request(port(), "GET", target, h);
  }

  /// Every GET route of the router with its path parameters filled with this fixture's ids, and
  /// each with the query strings that select content, renderings and snapshots.
  std::vector<std::string> every_read() {
    std::vector<std::string> targets;
    for (const auto& r : cl::app::groups().routes()) {
      if (r.method != "GET") continue;
      std::string path{r.path_template};
      auto fill = [&](const std::string& name, const std::string& value) {
        if (auto at = path.find(name); at != std::string::npos) path.replace(at, name.size(), value);
      };
      if (path.find("/content-units/{id}") != std::string::npos) fill("{id}", unit());
      if (path.find("/works/{id}") != std::string::npos) fill("{id}", work);
      if (path.find("/activities/{id}") != std::string::npos) fill("{id}", activity);
      if (path.find("/contracts/{id}") != std::string::npos) fill("{id}", contract);
      fill("{id}", resource);
      fill("{principal}", "u_alice");
      for (const char* query : {"", "?fields=*", "?fields=entities", "?fields=content", "?fields=id,entities.entities",
                                "?format=ndjson", "?format=markdown", "?resource_id=", "?version="}) {
        std::string q = query;
        if (q == "?resource_id=") q += resource;
        if (q == "?version=") q += version;
        targets.push_back(path + q);
      }
    }
    return targets;
  }
};

/// Every read in `f.every_read()` with `extra` headers: none may show the sentinel, nor any of
/// `digests` (the content's hashes, which would confirm a guess of it), in its body or headers.
void no_read_shows_the_content(fixture& f, const headers& extra, const std::vector<std::string>& digests = {}) {
  int answered = 0;
  for (const auto& target : f.every_read()) {
    INFO(target);
    auto r = f.get(target, extra);
    REQUIRE(r);
    CHECK(r->body.find(sentinel) == std::string::npos);
    for (const auto& d : digests) {
      CHECK(r->body.find(d) == std::string::npos);
      CHECK(r->header("etag").find(d) == std::string::npos);
    }
    if (r->status == 200) ++answered;
  }
  CHECK(answered > 10);  // metadata reads still answer
}

/// The `hash` of every Resource event with one (not `resource.rights_changed`, whose `hash` is null
/// by design) the change feed answers the fixture's caller from before the first write (the
/// Resource's creation, and each write since): a string, or "null".
std::vector<std::string> feed_hashes(fixture& f) {
  auto r = f.get("/v0/content-lake/changes?since=" + f.feed_start);
  REQUIRE(r);
  REQUIRE(r->status == 200);
  std::vector<std::string> hashes;
  auto page = json_object_of(r);
  for (const auto& e : page.at("events").as_array())
    if (e.as_object().contains("resource_id") && e.at("type") != "resource.rights_changed")
      hashes.push_back(json::serialize(e.at("hash")));
  REQUIRE_FALSE(hashes.empty());
  return hashes;
}

/// The refused reads of content, each 403 USAGE_PROHIBITED.
void content_reads_are_refused(fixture& f, const headers& extra) {
  auto base = "/v0/content-lake/resources/" + f.resource;
  for (const auto& target :
       {base, base + "?fields=entities", base + "?fields=entities.entities", base + "?fields=*", base + "?fields=content",
        base + "?fields=id,content.blocks", base + "?format=ndjson", base + "?format=markdown",
        base + "?version=" + f.version, base + "/entities", "/v0/content-lake/content-units?resource_id=" + f.resource,
        "/v0/content-lake/content-units/" + f.unit(), base + "?fields=hash_content", base + "?fields=id,hash",
        base + "?fields=lineage", base + "?fields=title,lineage.versions.hash_content"}) {
    INFO(target);
    auto r = f.get(target, extra);
    REQUIRE(r);
    CHECK(r->status == 403);
    CHECK(reason_of(*r) == "USAGE_PROHIBITED");
  }
}

/// Writes answer with the Resource; those answers must not hand out the content either.
void write_answers_withhold_the_content(fixture& f, const headers& extra) {
  auto base = "/v0/content-lake/resources/" + f.resource;
  auto token = json_object_of(f.get(base + "?fields=update_token", extra)).at("update_token").as_string();
  headers h = {{"Authorization", "Bearer " + f.token}, {"Content-Type", "application/json"}};
  h.insert(h.end(), extra.begin(), extra.end());
  auto patched = http_request(f.port(), "PATCH", base, h,
                              R"({"title":"Neap tides","update_token":")" + std::string{token} + "\"}");
  REQUIRE(patched);
  CHECK(patched->status == 200);
  CHECK(patched->body.find(sentinel) == std::string::npos);
  CHECK(json_object_of(patched).contains("rights"));
  // Nor its digests: the hashes, and the ETag that is the hash.
  for (const char* digest : {"hash", "hash_content"}) CHECK_FALSE(json_object_of(patched).contains(digest));
  CHECK(patched->header("etag").empty());
  auto snapshot = http_request(f.port(), "POST", base + "/versions", h, "");
  REQUIRE(snapshot);
  CHECK(snapshot->status / 100 == 2);
  CHECK(snapshot->body.find(sentinel) == std::string::npos);
  auto list = f.get("/v0/content-lake/resources", extra);
  REQUIRE(list->status == 200);
  CHECK(list->body.find(sentinel) == std::string::npos);
  auto item = json_object_of(list).at("resources").as_array()[0].as_object();
  CHECK_FALSE(item.contains("content"));
  for (const char* digest : {"hash", "hash_content"}) CHECK_FALSE(item.contains(digest));
  CHECK(item.contains("rights"));
  auto versions = json_object_of(f.get(base + "/versions", extra)).at("versions").as_array();
  REQUIRE_FALSE(versions.empty());
  for (const char* digest : {"hash", "hash_content"}) CHECK_FALSE(versions[0].as_object().contains(digest));
  // A metadata read answers without an ETag, so If-None-Match cannot test a guess either.
  auto meta = f.get(base + "?fields=id,title", extra);
  REQUIRE(meta->status == 200);
  CHECK(meta->header("etag").empty());
}

}  // namespace

TEST_CASE("a contract prohibiting ACCESS and DISPLAY keeps the content out of every answer", "[layer3]") {
  fixture f(R"([{"usage_type":"ACCESS","status":"PROHIBITED"},{"usage_type":"DISPLAY","status":"PROHIBITED"}])");
  content_reads_are_refused(f, {});
  no_read_shows_the_content(f, {});
  write_answers_withhold_the_content(f, {});
  // The change feed's events are thin, but their `hash` covers the content: withheld as on a read
  // (webhook deliveries and event streams read through the same scan).
  for (const auto& h : feed_hashes(f)) CHECK(h == "null");
  // Metadata stays readable and says why.
  auto meta = json_object_of(f.get("/v0/content-lake/resources/" + f.resource + "?fields=id,title"));
  CHECK_FALSE(meta.at("rights").at("usable").as_bool());
}

TEST_CASE("a declared AI purpose that nothing permits keeps the content out of every answer", "[layer3]") {
  fixture f(R"([{"usage_type":"ACCESS","status":"PERMITTED"},{"usage_type":"DISPLAY","status":"PERMITTED"}])");
  // The same reads without a declared purpose do show the content: the sentinel can be found.
  auto plain = f.get("/v0/content-lake/resources/" + f.resource + "?fields=entities");
  REQUIRE(plain->status == 200);
  CHECK(plain->body.find(sentinel) != std::string::npos);
  CHECK(f.get("/v0/content-lake/resources/" + f.resource + "?format=markdown")->body.find(sentinel) != std::string::npos);

  // The content's digests as an allowed reader sees them: a refused one must never get them.
  auto allowed = f.get("/v0/content-lake/resources/" + f.resource);
  REQUIRE(allowed->status == 200);
  std::vector<std::string> digests = {std::string{json_object_of(allowed).at("hash_content").as_string()},
                                      std::string{json_object_of(allowed).at("hash").as_string()}};
  CHECK(allowed->header("etag") == "\"" + digests[1] + "\"");
  // A plain reader gets the hash in the change feed's events (the refused case above gets null).
  for (const auto& h : feed_hashes(f)) CHECK(h.rfind("\"sha256:", 0) == 0);

  headers training = {{"X-Usage-Purpose", "AI_TRAINING"}};
  content_reads_are_refused(f, training);
  no_read_shows_the_content(f, training, digests);
  write_answers_withhold_the_content(f, training);
  headers retrieval = {{"X-Usage-Purpose", "AI_RETRIEVAL; method=MCP"}};
  content_reads_are_refused(f, retrieval);
  no_read_shows_the_content(f, retrieval);
}

TEST_CASE("every Resource representation carries rights, masked reads and version lists included", "[layer3][fields]") {
  fixture f(R"([{"usage_type":"ACCESS","status":"PERMITTED"}])");
  auto base = "/v0/content-lake/resources/" + f.resource;
  auto full = json_object_of(f.get(base)).at("rights").as_object();

  auto title = json_object_of(f.get(base + "?fields=title"));
  CHECK(title.size() == 2);
  CHECK(title.at("title").as_string() == "Spring tides");
  CHECK(title.at("rights").as_object() == full);

  // A mask naming parts of rights narrows rights to them, plus the one-glance verdict.
  auto narrow = json_object_of(f.get(base + "?fields=id,rights.usage_terms"));
  auto rights = narrow.at("rights").as_object();
  CHECK(rights.size() == 2);
  CHECK(rights.at("usage_terms") == full.at("usage_terms"));
  CHECK(rights.at("usable") == full.at("usable"));
  auto basis = json_object_of(f.get(base + "?fields=rights.basis.contract_id")).at("rights").as_object();
  CHECK(basis.size() == 2);
  CHECK(basis.at("basis").as_array()[0].as_object().at("contract_id").as_string() == f.contract);

  auto versions = json_object_of(f.get(base + "/versions")).at("versions").as_array();
  REQUIRE(versions.size() == 1);
  auto item = versions[0].as_object();
  CHECK(item.at("rights").as_object().at("basis") == full.at("basis"));
  CHECK(item.contains("hash"));
  CHECK_FALSE(item.contains("content"));
  CHECK_FALSE(item.contains("update_token"));
}

namespace {

/// The rights headers of `r` (Content-Usage, tdm-reservation, tdm-policy), "" where absent.
std::vector<std::string> travel_of(const http_response& r) {
  return {r.header("content-usage"), r.header("tdm-reservation"), r.header("tdm-policy")};
}

}  // namespace

TEST_CASE("rights travel on every content read and its refusal, never on ACCESS_DENIED or 404", "[layer3][odrl]") {
  // Retrieval permitted without a method, training prohibited: search=y, train-ai=n, reserved.
  fixture f(R"([{"usage_type":"AI_RETRIEVAL","status":"PERMITTED"},{"usage_type":"AI_TRAINING","status":"PROHIBITED"}])");
  auto base = "/v0/content-lake/resources/" + f.resource;
  std::vector<std::string> expected = {"train-ai=n, search=y", "1", base + "/rights/odrl"};
  auto head = [&](const std::string& target, const headers& extra = {}) {
    headers h = {{"Authorization", "Bearer " + f.token}};
    h.insert(h.end(), extra.begin(), extra.end());
    return http_request(f.port(), "HEAD", target, h);
  };
  auto etag = f.get(base)->header("etag");
  for (const auto& target : {base, base + "?format=ndjson", base + "?format=markdown", base + "?fields=title",
                             base + "?version=" + f.version, base + "/entities",
                             "/v0/content-lake/content-units?resource_id=" + f.resource,
                             "/v0/content-lake/content-units/" + f.unit()}) {
    INFO(target);
    auto got = f.get(target);
    REQUIRE(got);
    CHECK(got->status == 200);
    CHECK(travel_of(*got) == expected);
    auto h = head(target);
    REQUIRE(h);
    CHECK(travel_of(*h) == expected);
  }
  auto not_modified = f.get(base, {{"If-None-Match", etag}});
  REQUIRE(not_modified->status == 304);
  CHECK(travel_of(*not_modified) == expected);
  // Declaring what the headers say: retrieval served, training refused, the refusal carrying them too.
  CHECK(f.get(base, {{"X-Usage-Purpose", "AI_RETRIEVAL"}})->status == 200);
  auto refused = f.get(base, {{"X-Usage-Purpose", "AI_TRAINING"}});
  REQUIRE(refused->status == 403);
  CHECK(reason_of(*refused) == "USAGE_PROHIBITED");
  CHECK(travel_of(*refused) == expected);
  auto refused_unit = f.get("/v0/content-lake/content-units/" + f.unit(), {{"X-Usage-Purpose", "AI_TRAINING"}});
  REQUIRE(refused_unit->status == 403);
  CHECK(travel_of(*refused_unit) == expected);
  // Another caller with no grant, an id that names nothing, a token without the scope: nothing travels.
  auto bob = token_with(scopes, "t_test", "u_bob");
  auto denied = http_request(f.port(), "GET", base, {{"Authorization", "Bearer " + bob}});
  REQUIRE(denied->status == 403);
  CHECK(reason_of(*denied) == "ACCESS_DENIED");
  CHECK(travel_of(*denied) == std::vector<std::string>{"", "", ""});
  CHECK(http_request(f.port(), "GET", base + "/rights/odrl", {{"Authorization", "Bearer " + bob}})->status == 403);
  auto missing = f.get("/v0/content-lake/resources/res_missing");
  CHECK(travel_of(*missing) == std::vector<std::string>{"", "", ""});
  auto unscoped = http_request(f.port(), "GET", base, {{"Authorization", "Bearer " + token_with("contracts.read")}});
  REQUIRE(unscoped->status == 403);
  CHECK(travel_of(*unscoped) == std::vector<std::string>{"", "", ""});
}

TEST_CASE("a caller refused the content still gets its policy, which says why, and nothing of the content",
          "[layer3][odrl]") {
  fixture f(R"([{"usage_type":"ACCESS","status":"PROHIBITED","exception":"embargo until launch"}])");
  auto base = "/v0/content-lake/resources/" + f.resource;
  auto refused = f.get(base);
  REQUIRE(refused->status == 403);
  CHECK(travel_of(*refused) == std::vector<std::string>{"train-ai=n, search=n", "1", base + "/rights/odrl"});
  auto policy = f.get(base + "/rights/odrl");
  REQUIRE(policy->status == 200);
  CHECK(policy->header("content-type") == "application/ld+json");
  CHECK(policy->body.find(sentinel) == std::string::npos);
  auto doc = json::parse(policy->body).as_object();
  bool read_prohibited = false;
  for (const auto& rule : doc.at("prohibition").as_array())
    if (rule.at("action") == "read") read_prohibited = rule.at("dct:description") == "embargo until launch";
  CHECK(read_prohibited);
  for (const auto& rule : doc.at("permission").as_array()) CHECK(rule.at("action") != "read");
  // The ETag names the policy: 304 while it holds.
  auto tag = policy->header("etag");
  CHECK(tag.rfind("\"odrl-", 0) == 0);
  CHECK(f.get(base + "/rights/odrl", {{"If-None-Match", tag}})->status == 304);
  // Embedded under the mask: the same policy, no content; a path inside it is refused.
  auto masked = f.get(base + "?fields=rights.odrl");
  REQUIRE(masked->status == 200);
  auto embedded = json::parse(masked->body).as_object().at("rights").as_object().at("odrl").as_object();
  CHECK(embedded.at("uid") == doc.at("uid"));
  CHECK(masked->body.find(sentinel) == std::string::npos);
  CHECK(f.get(base + "?fields=rights.odrl.permission")->status == 400);
  // `*` and `rights` do not include it; beside other parts of `rights`, it narrows with them.
  CHECK_FALSE(json::parse(f.get(base + "?fields=rights")->body).as_object().at("rights").as_object().contains("odrl"));
  auto narrowed = json::parse(f.get(base + "?fields=title,rights.usage_terms,rights.odrl")->body).as_object();
  auto rights = narrowed.at("rights").as_object();
  CHECK(rights.size() == 3);  // usage_terms, odrl and usable
  CHECK(rights.at("odrl").at("uid") == doc.at("uid"));
  CHECK(rights.contains("usage_terms"));
  CHECK(narrowed.at("title") == "Spring tides");
  CHECK(f.get(base + "?fields=*,rights.odrl")->status == 403);  // `*` shows the content, refused here
}

TEST_CASE("tdmrep.json and the TDM offer are served without a token", "[odrl]") {
  test_service svc;
  auto tdm = http_request(svc.port(), "GET", "/.well-known/tdmrep.json", {});
  REQUIRE(tdm->status == 200);
  auto doc = json::parse(tdm->body).as_array();
  CHECK(doc.at(0).at("tdm-reservation") == 1);
  auto offer = http_request(svc.port(), "GET", std::string{doc.at(0).at("tdm-policy").as_string()}, {});
  REQUIRE(offer->status == 200);
  CHECK(offer->header("content-type") == "application/ld+json");
  CHECK(json::parse(offer->body).at("@type") == "Offer");
}

TEST_CASE("a page of Resources or of search hits carries each policy under rights.odrl when asked", "[layer3][odrl]") {
  fixture f(R"([{"usage_type":"ACCESS","status":"PROHIBITED"},{"usage_type":"AI_RETRIEVAL","status":"PERMITTED"}])");
  auto policy = json::parse(f.get("/v0/content-lake/resources/" + f.resource + "/rights/odrl")->body).as_object();
  auto list = f.get("/v0/content-lake/resources?fields=id,rights.odrl");
  REQUIRE(list->status == 200);
  auto item = json::parse(list->body).at("resources").as_array().at(0).as_object();
  CHECK(item.at("id").as_string() == f.resource);
  CHECK(item.at("rights").at("odrl").at("uid") == policy.at("uid"));
  CHECK(list->body.find(sentinel) == std::string::npos);  // refused the content: the list withholds it first
  // Without the name, no policy: a page does not pay for what it did not ask.
  auto plain = f.get("/v0/content-lake/resources?fields=id,rights");
  CHECK_FALSE(json::parse(plain->body).at("resources").as_array().at(0).at("rights").as_object().contains("odrl"));
  for (const char* stitched : {"lineage", "entities", "source", "rights.commercial_terms"}) {
    INFO(stitched);
    auto r = f.get(std::string{"/v0/content-lake/resources?fields=id,"} + stitched);
    CHECK(r->status == 400);
    CHECK(reason_of(*r) == "INVALID_ARGUMENT");
  }
  // Search: the body's `fields`; each hit keeps its id; a hit's target is the Resource without a version.
  auto search = [&](const std::string& body) {
    return http_request(f.port(), "POST", "/v0/content-lake/search",
                        {{"Authorization", "Bearer " + f.token}, {"Content-Type", "application/json"}}, body);
  };
  std::optional<http_response> hits;
  REQUIRE(eventually([&] {
    hits = search(R"({"query":"Spring","fields":"title,rights.odrl"})");
    return hits && hits->status == 200 && !json::parse(hits->body).at("hits").as_array().empty();
  }));
  auto hit = json::parse(hits->body).at("hits").as_array().at(0).as_object();
  CHECK(hit.at("id").as_string() == f.resource);
  CHECK_FALSE(hit.contains("score"));
  auto odrl = hit.at("rights").at("odrl").as_object();
  CHECK(odrl.at("target").as_string() == "cl://t_test/CHAPTER/" + f.resource);
  CHECK(odrl.at("permission").as_array().size() == policy.at("permission").as_array().size());
  CHECK(search(R"({"query":"Spring","fields":"rights.odrl.permission"})")->status == 400);
  CHECK(search(R"({"query":"Spring","fields":["title"]})")->status == 400);
  auto whole = search(R"({"query":"Spring"})");
  CHECK_FALSE(json::parse(whole->body).at("hits").as_array().at(0).at("rights").as_object().contains("odrl"));
}
