#include "domain/layer3.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::domain;
namespace json = boost::json;

namespace {

field_mask mask(std::string_view text) {
  auto m = parse_field_mask(text, resource_fields());
  REQUIRE(std::holds_alternative<field_mask>(m));
  return std::get<field_mask>(m);
}

resolved_rights with_usage(std::string type, std::string status) {
  resolved_rights r;
  r.json = R"({"usable":true})";
  r.usage_terms.push_back({std::move(type), "", std::move(status)});
  return r;
}

}  // namespace

TEST_CASE("every content-derived member makes a read reveal content; metadata does not", "[layer3]") {
  CHECK(reveals_content(nullptr));
  auto all = mask("*");
  CHECK(reveals_content(&all));
  for (auto member : content_derived_members()) {
    if (member == "snippet") continue;  // a search hit's member, not a Resource's (tests/client/search_api.py)
    auto m = mask("id," + std::string{member});
    CHECK(reveals_content(&m));
  }
  auto nested = mask("entities.entities");
  CHECK(reveals_content(&nested));
  auto meta = mask("id,title,rights,source,provenance,work,version,update_token,created,updated");
  CHECK_FALSE(reveals_content(&meta));
}

TEST_CASE("a refused use withholds every content-derived member and nothing else", "[layer3]") {
  std::string shown = R"({"id":"res_1","title":"T","content":{"blocks":[]},"entities":{"entities":[]},"rights":{},)"
                      R"("hash":"sha256:1","hash_content":"sha256:2","lineage":{"versions":[]}})";
  auto prohibited = with_usage("ACCESS", "PROHIBITED");
  auto out = json::parse(content_as_allowed(shown, prohibited, content_use{})).as_object();
  CHECK(out.size() == 3);
  CHECK_FALSE(out.contains("content"));
  CHECK_FALSE(out.contains("entities"));
  CHECK(refuse_content(prohibited, content_use{}, true));
  CHECK_FALSE(refuse_content(prohibited, content_use{}, false));

  auto permitted = with_usage("ACCESS", "PERMITTED");
  CHECK(content_as_allowed(shown, permitted, content_use{}) == shown);
  CHECK_FALSE(refuse_content(permitted, content_use{}, true));
  // A declared AI purpose needs an explicit permission.
  CHECK(refuse_content(permitted, content_use{"AI_TRAINING", ""}, true));
  CHECK(content_as_allowed(shown, permitted, content_use{"AI_TRAINING", ""}).find("content") == std::string::npos);
}
