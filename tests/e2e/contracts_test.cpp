// The contracts route group and what contracts do to every Resource read: rights, basis, hash.

#include "domain/contract.hpp"
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

const std::string all_scopes =
  "content-lake.read content-lake.write contracts.read contracts.write contracts.commercial.read";
const std::string no_commercial = "content-lake.read content-lake.write contracts.read contracts.write";

std::string reason(const std::optional<http_response>& r) {
  REQUIRE(r);
  return reason_of(*r);
}

std::string utc_in(std::int64_t seconds) { return cl::domain::format_utc(unix_now() + seconds); }

/// The OpenAPI example for creating a contract, covering `work` instead of the example's Work.
std::string example_contract(unsigned short port, const std::string& work) {
  auto doc = json::parse(http_request(port, "GET", "/v0/openapi.json")->body).as_object();
  auto example = doc.at("paths").at_pointer("/~1v0~1contracts/post/requestBody/content/application~1json/example").as_object();
  example["work_ids"] = json::array{json::value(work)};
  return json::serialize(example);
}

std::string contract_for(const std::string& work, const std::string& extra = "",
                         const std::string& usage = R"([{"usage_type":"ACCESS","status":"PERMITTED"}])") {
  return R"({"title":"Digital rights","status":"ACTIVE","valid_from":")" + utc_in(-3600) + R"(","work_ids":[")" + work
         + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],"usage_terms":)" + usage + extra + "}";
}

struct world {
  test_service svc;
  std::string token = token_with(all_scopes);
  std::string work, resource;

  explicit world(const std::function<void(cl::config::settings&)>& tweak = {}) : svc(tweak) {
    work = std::string{json_object_of(post_json(port(), "/v0/content-lake/works", token, R"({"title":"Tides"})")).at("id").as_string()};
    resource = std::string{json_object_of(post_json(port(), "/v0/content-lake/resources", token,
                                           R"({"title":"Spring tides","type":"CHAPTER","language":"en","work_id":")" + work
                                             + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph",)"
                                               R"("key":"p1","children":[{"type":"span","text":"Seven metres."}]}]}})"))
                             .at("id")
                             .as_string()};
  }
  unsigned short port() { return svc.port(); }
  std::optional<http_response> read_resource() {
    return get_with_token(port(), "/v0/content-lake/resources/" + resource, token);
  }
  json::object rights() { return json_object_of(read_resource()).at("rights").as_object(); }
};

std::string usage_status(const json::object& rights, const std::string& type) {
  for (const auto& u : rights.at("usage_terms").as_array())
    if (u.as_object().at("usage_type").as_string() == type && !u.as_object().contains("method"))
      return std::string{u.as_object().at("status").as_string()};
  return "";
}

}  // namespace

TEST_CASE("the OpenAPI contract example is an ACTIVE contract, valid now, permitting ACCESS and DISPLAY", "[contracts]") {
  world w;
  auto before = w.read_resource();
  REQUIRE(before->status == 200);
  CHECK_FALSE(w.rights().at("usable").as_bool());
  auto created = post_json(w.port(), "/v0/contracts", w.token, example_contract(w.port(), w.work));
  REQUIRE(created);
  INFO(created->body);
  REQUIRE(created->status == 201);
  auto contract = json::parse(created->body).as_object();
  std::string id{contract.at("id").as_string()};
  CHECK(id.rfind("ctr_", 0) == 0);
  CHECK(created->header("location") == "/v0/contracts/" + id);
  CHECK(contract.at("version").as_int64() == 1);
  CHECK(contract.at("status").as_string() == "ACTIVE");
  CHECK(contract.contains("commercial_terms"));

  auto rights = w.rights();
  CHECK(rights.at("usable").as_bool());
  CHECK(usage_status(rights, "ACCESS") == "PERMITTED");
  CHECK(usage_status(rights, "DISPLAY") == "PERMITTED");
  CHECK(usage_status(rights, "AI_TRAINING") == "PROHIBITED");  // shipped policy: explicit permission needed
  CHECK(json::serialize(rights.at("basis")) == R"([{"contract_id":")" + id + R"(","contract_version":1}])");
  CHECK(json::serialize(rights.at("handling_terms")).find("ATTRIBUTION") != std::string::npos);
  // The rights changed, so the hash did: the old ETag no longer gives a 304.
  auto after = w.read_resource();
  CHECK(after->header("etag") != before->header("etag"));
  auto conditional = http_request(w.port(), "GET", "/v0/content-lake/resources/" + w.resource,
                                  {{"Authorization", "Bearer " + w.token}, {"If-None-Match", before->header("etag")}});
  CHECK(conditional->status == 200);
  // The edge cache's keys name what the read depends on: the tenant, the Resource, its Work, the
  // contracts of its basis (before the contract: no contract).
  auto keys = "t_test " + w.resource + " " + w.work;
  CHECK(before->header("surrogate-key") == keys);
  CHECK(after->header("surrogate-key") == keys + " " + id);
  CHECK(after->header("xkey") == after->header("surrogate-key"));
  auto work = get_with_token(w.port(), "/v0/content-lake/works/" + w.work, w.token);
  REQUIRE(work);
  CHECK(work->header("surrogate-key") == "t_test " + w.work);
}

/// The seconds of `Surrogate-Control: max-age=N` on `r`, or -1 without one.
long edge_max_age(const std::optional<http_response>& r) {
  REQUIRE(r);
  auto value = r->header("surrogate-control");
  if (value.rfind("max-age=", 0) != 0) return -1;
  return std::stol(value.substr(8));
}

TEST_CASE("an edge may keep a read until the token expires or the rights change, no longer", "[contracts][edge]") {
  world w;
  // No contract: the token's lifetime bounds it (test tokens live ten minutes).
  auto plain = edge_max_age(w.read_resource());
  CHECK(plain > 500);
  CHECK(plain <= 600);
  // A contract ending in two minutes: the rights change then, so no edge keeps the answer past it.
  auto created = post_json(w.port(), "/v0/contracts", w.token,
                           contract_for(w.work, R"(,"valid_until":")" + utc_in(120) + "\""));
  REQUIRE(created->status == 201);
  auto bounded = edge_max_age(w.read_resource());
  CHECK(bounded > 100);
  CHECK(bounded <= 120);
  // The entities follow the same rights; Works and Sources only the token.
  auto entities = edge_max_age(get_with_token(w.port(), "/v0/content-lake/resources/" + w.resource + "/entities", w.token));
  CHECK(entities > 100);
  CHECK(entities <= 120);
  CHECK(edge_max_age(get_with_token(w.port(), "/v0/content-lake/works/" + w.work, w.token)) > 500);
}

TEST_CASE("a contract edit changes rights and hash on the next read", "[contracts]") {
  world w;
  auto created = json_object_of(post_json(w.port(), "/v0/contracts", w.token, contract_for(w.work)));
  std::string id{created.at("id").as_string()};
  auto first = w.read_resource();
  CHECK(usage_status(w.rights(), "DERIVE") == "");
  // A stale update_token is refused; nothing changes.
  auto stale = post_json(w.port(), "/v0/contracts/" + id + "/versions", w.token,
                         contract_for(w.work, R"(,"update_token":"utk_stale")"));
  CHECK(stale->status == 409);
  CHECK(reason(stale) == "TOKEN_MISMATCH");
  auto next = post_json(w.port(), "/v0/contracts/" + id + "/versions", w.token,
                        contract_for(w.work, R"(,"update_token":")" + std::string{created.at("update_token").as_string()} + "\"",
                                     R"([{"usage_type":"ACCESS","status":"PERMITTED"},{"usage_type":"DERIVE","status":"PROHIBITED","exception":"no adaptations"}])"));
  REQUIRE(next->status == 201);
  CHECK(json_object_of(next).at("version").as_int64() == 2);
  auto second = w.read_resource();
  CHECK(second->header("etag") != first->header("etag"));
  auto rights = json::parse(second->body).as_object().at("rights").as_object();
  CHECK(usage_status(rights, "DERIVE") == "PROHIBITED");
  CHECK(json::serialize(rights.at("basis")).find(R"("contract_version":2)") != std::string::npos);
  // Both versions stay readable.
  CHECK(json_object_of(get_with_token(w.port(), "/v0/contracts/" + id + "?version=1", w.token)).at("version").as_int64() == 1);
  auto versions = json_object_of(get_with_token(w.port(), "/v0/contracts/" + id + "/versions", w.token)).at("versions").as_array();
  REQUIRE(versions.size() == 2);
  CHECK(versions[0].as_object().at("version").as_int64() == 1);
  CHECK(versions[1].as_object().at("version").as_int64() == 2);
}

TEST_CASE("a window that closes makes usable false without any write", "[contracts]") {
  world w;
  auto closes = contract_for(w.work, R"(,"valid_until":")" + utc_in(2) + "\"");
  REQUIRE(post_json(w.port(), "/v0/contracts", w.token, closes)->status == 201);
  auto open = w.read_resource();
  REQUIRE(json::parse(open->body).as_object().at("rights").as_object().at("usable").as_bool());
  std::optional<http_response> closed;
  CHECK(eventually([&] {
    closed = w.read_resource();
    return !json::parse(closed->body).as_object().at("rights").as_object().at("usable").as_bool();
  }, 10000));
  CHECK(closed->header("etag") != open->header("etag"));
  CHECK(json::parse(closed->body).as_object().at("rights").as_object().at("basis").as_array().empty());
}

TEST_CASE("contracts that are not ACTIVE, or not yet valid, contribute nothing", "[contracts]") {
  world w;
  auto draft = contract_for(w.work);
  draft.replace(draft.find("\"ACTIVE\""), 8, "\"DRAFT\"");
  REQUIRE(post_json(w.port(), "/v0/contracts", w.token, draft)->status == 201);
  auto future = contract_for(w.work);
  future.replace(future.find(utc_in(-3600)), 20, utc_in(86400));
  REQUIRE(post_json(w.port(), "/v0/contracts", w.token, future)->status == 201);
  auto rights = w.rights();
  CHECK_FALSE(rights.at("usable").as_bool());
  CHECK(rights.at("contracts").as_array().empty());
}

TEST_CASE("commercial terms need contracts.commercial.read", "[contracts]") {
  world w;
  auto created = json_object_of(post_json(w.port(), "/v0/contracts", w.token, example_contract(w.port(), w.work)));
  std::string id{created.at("id").as_string()};
  auto plain = token_with(no_commercial);
  auto without = json_object_of(get_with_token(w.port(), "/v0/contracts/" + id, plain));
  CHECK_FALSE(without.contains("commercial_terms"));
  CHECK(without.contains("usage_terms"));
  auto named = get_with_token(w.port(), "/v0/contracts/" + id + "?fields=id,commercial_terms", plain);
  CHECK(named->status == 403);
  CHECK(reason(named) == "SCOPE_MISSING");
  auto all = get_with_token(w.port(), "/v0/contracts/" + id + "?fields=*", plain);
  CHECK(all->status == 200);
  CHECK_FALSE(json_object_of(all).contains("commercial_terms"));
  // Named beside `*` they are still named: 403, not a 200 that leaves them out.
  for (const char* mask : {"*,commercial_terms", "commercial_terms,*", "*,commercial_terms.royalties"}) {
    auto starred = get_with_token(w.port(), "/v0/contracts/" + id + "?fields=" + mask, plain);
    CHECK(starred->status == 403);
    CHECK(reason(starred) == "SCOPE_MISSING");
  }
  auto with = json_object_of(get_with_token(w.port(), "/v0/contracts/" + id + "?fields=id,commercial_terms", w.token));
  CHECK(with.size() == 2);
  CHECK(with.at("commercial_terms").as_object().contains("royalties"));
  auto listed = json_object_of(get_with_token(w.port(), "/v0/contracts", plain)).at("contracts").as_array();
  REQUIRE(listed.size() == 1);
  CHECK_FALSE(listed[0].as_object().contains("commercial_terms"));
  // Writing commercial terms needs the scope, checked before their shape: null or [] is 403 too.
  for (const char* terms : {R"(,"commercial_terms":{"advances":[{"amount":"10.00","currency":"EUR"}]})",
                            R"(,"commercial_terms":null)", R"(,"commercial_terms":[])"}) {
    auto written = post_json(w.port(), "/v0/contracts", plain, contract_for(w.work, terms));
    CHECK(written->status == 403);
    CHECK(reason(written) == "SCOPE_MISSING");
  }
  // A write without them answers with what the writer may see.
  auto written = post_json(w.port(), "/v0/contracts", plain, contract_for(w.work, ""));
  CHECK(written->status == 201);
  CHECK_FALSE(json_object_of(written).contains("commercial_terms"));
  // And a Resource read never carries them.
  CHECK(w.read_resource()->body.find("commercial") == std::string::npos);
}

TEST_CASE("contract reads and writes: scopes, validation, misses, tenancy, lists", "[contracts]") {
  world w;
  auto content_only = token_with("content-lake.read content-lake.write");
  auto refused = post_json(w.port(), "/v0/contracts", content_only, contract_for(w.work));
  CHECK(refused->status == 403);
  CHECK(reason(refused) == "SCOPE_MISSING");
  CHECK(reason(get_with_token(w.port(), "/v0/contracts", content_only)) == "SCOPE_MISSING");

  auto unknown_work = post_json(w.port(), "/v0/contracts", w.token, contract_for("wk_missing"));
  CHECK(unknown_work->status == 400);
  CHECK(json::serialize(json_object_of(unknown_work).at("error").at_pointer("/details/0/field")) == R"("/work_ids/0")");
  auto bad = post_json(w.port(), "/v0/contracts", w.token, R"({"title":"x","valid_from":"soon","work_ids":[")" + w.work + "\"]}");
  CHECK(bad->status == 400);
  CHECK(reason(bad) == "INVALID_ARGUMENT");

  auto missing = get_with_token(w.port(), "/v0/contracts/ctr_missing", w.token);
  CHECK(missing->status == 404);
  CHECK(reason(missing) == "CONTRACT_NOT_FOUND");
  CHECK(reason(get_with_token(w.port(), "/v0/contracts/ctr_missing/versions", w.token)) == "CONTRACT_NOT_FOUND");
  CHECK(reason(post_json(w.port(), "/v0/contracts/ctr_missing/versions", w.token,
                         contract_for(w.work, R"(,"update_token":"x")")))
        == "CONTRACT_NOT_FOUND");

  auto active = json_object_of(post_json(w.port(), "/v0/contracts", w.token, contract_for(w.work)));
  std::string id{active.at("id").as_string()};
  CHECK(reason(get_with_token(w.port(), "/v0/contracts/" + id + "?version=7", w.token)) == "CONTRACT_NOT_FOUND");
  CHECK(reason(get_with_token(w.port(), "/v0/contracts/" + id + "?version=zero", w.token)) == "INVALID_ARGUMENT");
  auto foreign = get_with_token(w.port(), "/v0/contracts/" + id, token_with(all_scopes, "t_other"));
  CHECK(foreign->status == 404);
  CHECK(reason(foreign) == "CONTRACT_NOT_FOUND");

  auto draft = contract_for(w.work);
  draft.replace(draft.find("\"ACTIVE\""), 8, "\"DRAFT\"");
  REQUIRE(post_json(w.port(), "/v0/contracts", w.token, draft)->status == 201);
  CHECK(json_object_of(get_with_token(w.port(), "/v0/contracts", w.token)).at("contracts").as_array().size() == 2);
  auto actives = json_object_of(get_with_token(w.port(), "/v0/contracts?status=ACTIVE", w.token)).at("contracts").as_array();
  REQUIRE(actives.size() == 1);
  CHECK(actives[0].as_object().at("id").as_string() == id);
  CHECK(json_object_of(get_with_token(w.port(), "/v0/contracts?work_id=wk_other", w.token)).at("contracts").as_array().empty());
  CHECK(reason(get_with_token(w.port(), "/v0/contracts?status=LIVE", w.token)) == "INVALID_ARGUMENT");
  auto page = json_object_of(get_with_token(w.port(), "/v0/contracts?page_size=1", w.token));
  CHECK(page.at("contracts").as_array().size() == 1);
  CHECK(page.contains("next_page_token"));
}

TEST_CASE("a policy change is applied without a restart and changes the hash", "[contracts][policy]") {
  temp_dir dir;
  auto policy_path = dir.path + "/policy.json";
  auto write_policy = [&](const std::string& text) {
    std::ofstream{policy_path + ".tmp"} << text;
    std::rename((policy_path + ".tmp").c_str(), policy_path.c_str());
  };
  write_policy(R"({"version":"p1","explicit_permission_usages":["AI_TRAINING"]})");
  world w{[&](cl::config::settings& s) { s.rights.policy_file = policy_path; }};
  REQUIRE(post_json(w.port(), "/v0/contracts", w.token,
                    contract_for(w.work, "", R"([{"usage_type":"ACCESS","status":"PERMITTED"},{"usage_type":"DISPLAY","status":"PERMITTED"}])"))
            ->status
          == 201);
  auto before = w.read_resource();
  CHECK(json::parse(before->body).as_object().at("rights").as_object().at("policy_version").as_string() == "p1");
  write_policy(R"({"version":"p2","prohibited_usages":["DISPLAY"]})");
  // A metadata-only read is not a use of the content, so it shows the new rights.
  auto metadata = [&] { return get_with_token(w.port(), "/v0/content-lake/resources/" + w.resource + "?fields=id,rights", w.token); };
  std::optional<http_response> after;
  CHECK(eventually([&] {
    after = metadata();
    return usage_status(json::parse(after->body).as_object().at("rights").as_object(), "DISPLAY") == "PROHIBITED";
  }));
  CHECK(after->header("etag") != before->header("etag"));
  CHECK(json::parse(after->body).as_object().at("rights").as_object().at("policy_version").as_string() == "p2");
  // Reading the content is DISPLAY, which the policy now prohibits (layer 3).
  auto refused = w.read_resource();
  CHECK(refused->status == 403);
  CHECK(reason(refused) == "USAGE_PROHIBITED");
  CHECK(refused->body.find("DISPLAY") != std::string::npos);
}

TEST_CASE("layer 3: reading content and declared AI purposes against the resolved rights", "[contracts][usage]") {
  world w;
  auto read_as = [&](const std::string& purpose, const std::string& path = "") {
    std::vector<std::pair<std::string, std::string>> headers{{"Authorization", "Bearer " + w.token}};
    if (!purpose.empty()) headers.emplace_back("X-Usage-Purpose", purpose);
    return http_request(w.port(), "GET", path.empty() ? "/v0/content-lake/resources/" + w.resource : path, headers);
  };
  // No contract in force: readable, usable false; a declared AI purpose needs an explicit permission.
  auto plain = read_as("");
  CHECK(plain->status == 200);
  CHECK_FALSE(json_object_of(plain).at("rights").at_pointer("/usable").as_bool());
  auto ai = read_as("AI_RETRIEVAL");
  CHECK(ai->status == 403);
  CHECK(reason(ai) == "USAGE_PROHIBITED");
  CHECK(json::serialize(json_object_of(ai).at("error").at_pointer("/details/0")).find("AI_RETRIEVAL") != std::string::npos);
  CHECK(reason(read_as("SUMMARISING")) == "INVALID_ARGUMENT");
  CHECK(reason(read_as("AI_RETRIEVAL; method=FAX")) == "INVALID_ARGUMENT");
  // Sent empty: refused naming the header, never a plain read (a purpose that went missing).
  for (const char* blank : {"", "   "}) {
    auto sent_empty = http_request(w.port(), "GET", "/v0/content-lake/resources/" + w.resource,
                                   {{"Authorization", "Bearer " + w.token}, {"X-Usage-Purpose", blank}});
    CHECK(sent_empty->status == 400);
    CHECK(reason(sent_empty) == "INVALID_ARGUMENT");
    CHECK(json::serialize(json_object_of(sent_empty).at("error").at_pointer("/details/0")).find("X-Usage-Purpose")
          != std::string::npos);
  }

  REQUIRE(post_json(w.port(), "/v0/contracts", w.token,
                    contract_for(w.work, "",
                                 R"([{"usage_type":"ACCESS","status":"PERMITTED"},{"usage_type":"DISPLAY","status":"PERMITTED"},)"
                                 R"({"usage_type":"AI_RETRIEVAL","status":"PERMITTED","method":"MCP"},)"
                                 R"({"usage_type":"AI_RETRIEVAL","status":"PROHIBITED","method":"STREAM"}])"))
            ->status
          == 201);
  CHECK(read_as("AI_RETRIEVAL; method=MCP")->status == 200);
  auto stream = read_as("AI_RETRIEVAL; method=STREAM");
  CHECK(stream->status == 403);
  CHECK(stream->body.find("STREAM") != std::string::npos);
  CHECK(reason(read_as("AI_RETRIEVAL")) == "USAGE_PROHIBITED");  // no method-less permission
  CHECK(reason(read_as("AI_TRAINING")) == "USAGE_PROHIBITED");   // shipped policy
  // Every content read applies it: NDJSON, content units, the entity overlay.
  CHECK(reason(read_as("AI_TRAINING", "/v0/content-lake/resources/" + w.resource + "?format=ndjson")) == "USAGE_PROHIBITED");
  CHECK(reason(read_as("AI_TRAINING", "/v0/content-lake/content-units?resource_id=" + w.resource)) == "USAGE_PROHIBITED");
  CHECK(reason(read_as("AI_TRAINING", "/v0/content-lake/resources/" + w.resource + "/entities")) == "USAGE_PROHIBITED");
  CHECK(read_as("AI_RETRIEVAL; method=MCP", "/v0/content-lake/content-units?resource_id=" + w.resource)->status == 200);
  // A metadata-only read is not a use of the content.
  CHECK(read_as("AI_TRAINING", "/v0/content-lake/resources/" + w.resource + "?fields=id,title,rights")->status == 200);
  // Lists show every Resource; one whose rights do not allow the use comes without its content.
  auto listed = [&](const std::string& purpose) {
    auto page = json_object_of(read_as(purpose, "/v0/content-lake/resources?work_id=" + w.work));
    REQUIRE(page.at("resources").as_array().size() == 1);
    return page.at("resources").as_array()[0].as_object();
  };
  CHECK(listed("AI_RETRIEVAL; method=MCP").contains("content"));
  auto withheld = listed("AI_TRAINING");
  CHECK_FALSE(withheld.contains("content"));
  CHECK(withheld.contains("rights"));
  CHECK(reason(read_as("BROWSING", "/v0/content-lake/resources")) == "INVALID_ARGUMENT");
}

TEST_CASE("layer 3: a contract that prohibits ACCESS blocks reading the content, not the metadata", "[contracts][usage]") {
  world w;
  REQUIRE(post_json(w.port(), "/v0/contracts", w.token,
                    contract_for(w.work, "", R"([{"usage_type":"ACCESS","status":"PROHIBITED","exception":"embargo until launch"}])"))
            ->status
          == 201);
  auto refused = w.read_resource();
  CHECK(refused->status == 403);
  CHECK(reason(refused) == "USAGE_PROHIBITED");
  CHECK(refused->body.find("ACCESS") != std::string::npos);
  auto metadata = get_with_token(w.port(), "/v0/content-lake/resources/" + w.resource + "?fields=id,title,rights", w.token);
  CHECK(metadata->status == 200);
  CHECK_FALSE(json_object_of(metadata).at("rights").at_pointer("/usable").as_bool());
}

TEST_CASE("a new version from a writer without the commercial scope carries commercial terms forward", "[contracts][commercial]") {
  world w;
  auto created = json_object_of(post_json(
    w.port(), "/v0/contracts", w.token,
    contract_for(w.work, R"(,"commercial_terms":{"royalties":[{"rate_percent":10}],"advances":[{"amount":"500.00","currency":"EUR"}]})")));
  std::string id{created.at("id").as_string()};
  auto original = json::serialize(created.at("commercial_terms"));
  auto writer = token_with(no_commercial);

  // The writer reads the contract (without commercial terms) and posts the next version from it.
  auto read = json_object_of(get_with_token(w.port(), "/v0/contracts/" + id, writer));
  REQUIRE_FALSE(read.contains("commercial_terms"));
  for (const char* m : {"id", "version", "created", "updated"}) read.erase(m);
  read["title"] = "Digital rights, renewed";
  auto next = post_json(w.port(), "/v0/contracts/" + id + "/versions", writer, json::serialize(read));
  REQUIRE(next->status == 201);
  CHECK_FALSE(json_object_of(next).contains("commercial_terms"));
  auto v2 = json_object_of(get_with_token(w.port(), "/v0/contracts/" + id, w.token));
  CHECK(v2.at("version").as_int64() == 2);
  CHECK(v2.at("title").as_string() == "Digital rights, renewed");
  REQUIRE(v2.contains("commercial_terms"));
  CHECK(json::serialize(v2.at("commercial_terms")) == original);

  // Setting or changing them needs the scope, whatever the value (no oracle on the terms).
  for (const char* terms : {R"({"royalties":[{"rate_percent":50}]})", R"({"royalties":[{"rate_percent":10}]})", "{}"}) {
    auto body = read;
    body["update_token"] = v2.at("update_token");
    body["commercial_terms"] = json::parse(terms);
    auto forged = post_json(w.port(), "/v0/contracts/" + id + "/versions", writer, json::serialize(body));
    CHECK(forged->status == 403);
    CHECK(reason(forged) == "SCOPE_MISSING");
  }
  auto on_create = post_json(w.port(), "/v0/contracts", writer,
                             contract_for(w.work, R"(,"commercial_terms":{"royalties":[{"rate_percent":1}]})"));
  CHECK(on_create->status == 403);
  CHECK(reason(on_create) == "SCOPE_MISSING");
  CHECK(json_object_of(get_with_token(w.port(), "/v0/contracts/" + id, w.token)).at("version").as_int64() == 2);

  // A writer with the scope replaces them: leaving them out removes them.
  auto v3 = post_json(w.port(), "/v0/contracts/" + id + "/versions", w.token,
                      contract_for(w.work, R"(,"update_token":")" + std::string{v2.at("update_token").as_string()} + "\""));
  REQUIRE(v3->status == 201);
  CHECK_FALSE(json_object_of(v3).contains("commercial_terms"));
}
