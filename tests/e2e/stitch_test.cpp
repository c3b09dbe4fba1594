// Field masks that stitch parts from outside the Resource record (spec 4.2): source, work,
// provenance, lineage, the entity overlay, and commercial terms behind their scope.

#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::testing;
namespace json = boost::json;

namespace {

json::object parse(const std::optional<http_response>& r) {
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status / 100 == 2);
  return json::parse(r->body).as_object();
}

}  // namespace

TEST_CASE("named stitched fields are fetched and shown; unnamed ones are absent", "[resources][stitch]") {
  test_service svc;
  auto token = token_with("content-lake.read content-lake.write contracts.read contracts.write contracts.commercial.read");
  auto port = svc.port();
  std::string work{parse(post_json(port, "/v0/content-lake/works", token, R"({"title":"Tides"})")).at("id").as_string()};
  auto created = parse(post_json(port, "/v0/content-lake/resources", token,
                                 R"({"title":"Neap tides","type":"CHAPTER","language":"en","work_id":")" + work
                                   + R"(","source":{"name":"Upload","origin_type":"UPLOAD","system":"cms"},)"
                                     R"("content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
                                     R"("mark_defs":[{"key":"m1","type":"entity","entity_id":"ent_moon","entity_type":"PLACE"}],)"
                                     R"("children":[{"type":"span","text":"The Moon","marks":["m1"]}]}]}})"));
  std::string id{created.at("id").as_string()};
  auto path = "/v0/content-lake/resources/" + id;

  auto plain = parse(get_with_token(port, path + "?fields=id,title", token));
  CHECK(plain.size() == 3);  // id, title, and rights, which every read carries
  CHECK(plain.contains("rights"));
  auto stitched = parse(get_with_token(port, path + "?fields=id,source,work,provenance,lineage,entities", token));
  CHECK(stitched.at("source").at_pointer("/origin_type").as_string() == "UPLOAD");
  CHECK(stitched.at("work").at_pointer("/id").as_string() == work);
  auto activities = stitched.at("provenance").at_pointer("/activities").as_array();
  REQUIRE(activities.size() == 1);
  CHECK(activities[0].as_object().at("type").as_string() == "CREATION");
  CHECK(stitched.at("provenance").at_pointer("/complete").as_bool());
  CHECK(stitched.at("lineage").at_pointer("/current_version") == created.at("version"));
  CHECK(stitched.at("lineage").at_pointer("/versions").as_array().size() == 1);
  CHECK(stitched.at("entities").at_pointer("/entities/0/entity_id").as_string() == "ent_moon");
  CHECK_FALSE(stitched.contains("content"));
  // Paths into a stitched part select inside it.
  auto narrow = parse(get_with_token(port, path + "?fields=source.name", token));
  CHECK(json::serialize(narrow.at("source")) == R"({"name":"Upload"})");
  CHECK(narrow.size() == 2);

  // Commercial terms: only named, only with the scope.
  REQUIRE(post_json(port, "/v0/contracts", token,
                    R"({"title":"Rights","status":"ACTIVE","valid_from":"2020-01-01T00:00:00Z","work_ids":[")" + work
                      + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],)"
                        R"("usage_terms":[{"usage_type":"ACCESS","status":"PERMITTED"}],)"
                        R"("commercial_terms":{"royalties":[{"rate_percent":10}]}})")
            ->status
          == 201);
  auto commercial = parse(get_with_token(port, path + "?fields=rights.commercial_terms", token));
  auto terms = commercial.at("rights").at_pointer("/commercial_terms").as_array();
  REQUIRE(terms.size() == 1);
  CHECK(terms[0].as_object().at("royalties").at_pointer("/0/rate_percent").to_number<double>() == 10);
  CHECK(terms[0].as_object().at("contract_version").as_int64() == 1);
  auto plain_token = token_with("content-lake.read");
  auto refused = get_with_token(port, path + "?fields=rights.commercial_terms", plain_token);
  CHECK(refused->status == 403);
  CHECK(reason_of(*refused) == "SCOPE_MISSING");
  auto everything = parse(get_with_token(port, path + "?fields=*", plain_token));
  CHECK_FALSE(everything.at("rights").as_object().contains("commercial_terms"));
  CHECK(everything.contains("provenance"));
  CHECK(everything.contains("content"));
  CHECK(get_with_token(port, path, plain_token)->body.find("commercial") == std::string::npos);
}
