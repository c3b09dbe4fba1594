#include "domain/field_mask.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::domain;
namespace json = boost::json;

namespace {

json::object resource() {
  return json::parse(R"({"id":"res_1","title":"T","type":"DOCUMENT","hash":"sha256:ab",
    "rights":{"usable":true,"usage_terms":[{"usage_type":"ACCESS","status":"PERMITTED","method":"STREAM"},
                                           {"usage_type":"AI_TRAINING","status":"PROHIBITED"}],
              "contracts":[{"id":"ctr_1","status":"ACTIVE","version":2}]},
    "source":{"id":"src_1","name":"Upload"}})").as_object();
}

field_mask parse(std::string_view text) {
  auto m = parse_field_mask(text, resource_fields());
  REQUIRE(std::holds_alternative<field_mask>(m));
  return std::get<field_mask>(m);
}

}  // namespace

TEST_CASE("a mask selects named fields and dotted sub-fields", "[field_mask]") {
  auto out = apply_field_mask(resource(), parse("title, rights.usage_terms"));
  CHECK(out.size() == 2);
  CHECK(out.at("title").as_string() == "T");
  CHECK(out.at("rights").as_object().size() == 1);
  CHECK(out.at("rights").as_object().at("usage_terms").as_array().size() == 2);
}

TEST_CASE("paths traverse arrays of objects element-wise", "[field_mask]") {
  auto out = apply_field_mask(resource(), parse("rights.usage_terms.usage_type"));
  const auto& terms = out.at("rights").as_object().at("usage_terms").as_array();
  REQUIRE(terms.size() == 2);
  CHECK(terms[0].as_object().size() == 1);
  CHECK(terms[1].as_object().at("usage_type").as_string() == "AI_TRAINING");
}

TEST_CASE("* selects everything; names() tells which stitched parts to fetch", "[field_mask]") {
  auto all = parse("*");
  CHECK(apply_field_mask(resource(), all) == resource());
  CHECK(all.names("source"));
  auto some = parse("title,source.name");
  CHECK(some.names("source"));
  CHECK_FALSE(some.names("provenance"));
  CHECK(parse("provenance.anything.below").names("provenance"));
}

TEST_CASE("unknown or empty paths are INVALID_ARGUMENT with a detail each", "[field_mask]") {
  auto m = parse_field_mask("title,rights.royalties,nonsense,,rights..usable", resource_fields());
  REQUIRE(std::holds_alternative<api_error>(m));
  const auto& e = std::get<api_error>(m);
  CHECK(e.id == error_id::invalid_argument);
  CHECK(e.details.size() == 4);
  CHECK(e.details[0].field == "fields");
  CHECK(e.details[0].description.find("rights.royalties") != std::string::npos);
}

TEST_CASE("a field absent from the record is simply absent", "[field_mask]") {
  auto out = apply_field_mask(resource(), parse("work_id,title"));
  CHECK(out.size() == 1);
  CHECK(out.contains("title"));
}

TEST_CASE("array elements lacking a selected field stay objects", "[field_mask]") {
  auto out = apply_field_mask(resource(), parse("rights.usage_terms.method"));
  const auto& terms = out.at("rights").as_object().at("usage_terms").as_array();
  REQUIRE(terms.size() == 2);
  CHECK(terms[0].as_object().at("method").as_string() == "STREAM");
  CHECK(terms[1].is_object());
  CHECK(terms[1].as_object().empty());
}

TEST_CASE("a masked Resource read always carries rights; naming parts of rights keeps usable", "[field_mask][rights]") {
  auto title = apply_resource_mask(resource(), parse("title"));
  CHECK(title.size() == 2);
  CHECK(title.at("rights") == resource().at("rights"));
  auto narrow = apply_resource_mask(resource(), parse("id,rights.contracts.id"));
  const auto& rights = narrow.at("rights").as_object();
  CHECK(rights.size() == 2);
  CHECK(rights.at("usable").as_bool());
  CHECK(json::serialize(rights.at("contracts")) == R"([{"id":"ctr_1"}])");
  CHECK(apply_resource_mask(resource(), parse("*")) == resource());
}

TEST_CASE("rights.odrl is named, never inside, and only by name", "[fields][odrl]") {
  auto m = std::get<field_mask>(parse_field_mask("title,rights.odrl", resource_fields()));
  CHECK(m.names_member("rights", "odrl"));
  CHECK_FALSE(std::get<field_mask>(parse_field_mask("*", resource_fields())).names_member("rights", "odrl"));
  CHECK_FALSE(std::get<field_mask>(parse_field_mask("rights", resource_fields())).names_member("rights", "odrl"));
  CHECK(std::holds_alternative<api_error>(parse_field_mask("rights.odrl.permission", resource_fields())));
}
