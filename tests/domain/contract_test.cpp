// Contract bodies: validation with a JSON Pointer per failure, the canonical record, the
// resolver's view of it, and the commercial terms cut.

#include "domain/contract.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::domain;
namespace json = boost::json;

namespace {

const char* const valid_body = R"({
  "title": "Tides of Brittany: digital rights",
  "status": "ACTIVE",
  "valid_from": "2026-01-01T00:00:00Z",
  "valid_until": "2028-01-01T00:00:00Z",
  "work_ids": ["wk_tides"],
  "territorial_rights": [{"worldwide": true, "status": "PERMITTED"}, {"territory_codes": ["US", "CA"], "status": "PROHIBITED"}],
  "manifestation_rights": [{"manifestation_type": "EBOOK", "status": "PERMITTED"}],
  "usage_terms": [{"usage_type": "ACCESS", "status": "PERMITTED"}, {"usage_type": "AI_RETRIEVAL", "status": "PERMITTED", "method": "MCP"}],
  "handling_terms": [{"handling_type": "ATTRIBUTION", "status": "REQUIRED"}],
  "commercial_terms": {"royalties": [{"rate_percent": 12.5, "basis": "NET_RECEIPTS"}],
                       "advances": [{"amount": "5000.00", "currency": "EUR"}],
                       "payment_terms": {"currency": "EUR", "frequency": "QUARTERLY", "days_after_period": 30}}
})";

json::object body(const char* text = valid_body) { return json::parse(text).as_object(); }

/// The `details[0].field` of the refusal of `b`.
std::string refusal_field(const json::object& b) {
  auto r = parse_contract(b, false);
  REQUIRE(std::holds_alternative<api_error>(r));
  const auto& e = std::get<api_error>(r);
  CHECK(e.id == error_id::invalid_argument);
  REQUIRE_FALSE(e.details.empty());
  return e.details.front().field;
}

}  // namespace

TEST_CASE("a valid contract becomes a canonical record the resolver can read", "[contracts]") {
  auto parsed = parse_contract(body(), false);
  REQUIRE(std::holds_alternative<contract_draft>(parsed));
  auto record = contract_record_json(std::get<contract_draft>(parsed), "ctr_1", 1, "2026-11-22T12:00:00Z",
                                     "2026-11-22T12:00:00Z", "tok");
  auto view = contract_view_of(record);
  REQUIRE(view);
  CHECK(view->id == "ctr_1");
  CHECK(view->version == 1);
  CHECK(view->status == "ACTIVE");
  CHECK(view->territorial_rights.at(1).codes == std::vector<std::string>{"CA", "US"});
  CHECK(view->usage_terms.at(1).method == "MCP");
  CHECK(*view->valid_until - view->valid_from == 730 * 86400);
  CHECK(record.find("\"commercial_terms\"") != std::string::npos);
  auto cut = without_commercial_terms(record);
  CHECK(cut.find("commercial_terms") == std::string::npos);
  CHECK(cut.find("\"usage_terms\"") != std::string::npos);
}

TEST_CASE("contract validation names the offending member", "[contracts]") {
  auto with = [](const char* name, json::value v) {
    auto b = body();
    b[name] = std::move(v);
    return b;
  };
  auto without = [](const char* name) {
    auto b = body();
    b.erase(name);
    return b;
  };
  CHECK(refusal_field(without("title")) == "/title");
  CHECK(refusal_field(with("status", "LIVE")) == "/status");
  CHECK(refusal_field(without("valid_from")) == "/valid_from");
  CHECK(refusal_field(with("valid_until", "2025-01-01T00:00:00Z")) == "/valid_until");
  CHECK(refusal_field(with("work_ids", json::array{})) == "/work_ids");
  CHECK(refusal_field(with("work_ids", json::array{"res_1"})) == "/work_ids");
  CHECK(refusal_field(with("work_ids", json::array{"wk_a", "wk_a"})) == "/work_ids");
  CHECK(refusal_field(with("territorial_rights", json::parse(R"([{"territory_codes":["fra"],"status":"PERMITTED"}])")))
        == "/territorial_rights/0/territory_codes");
  CHECK(refusal_field(with("territorial_rights", json::parse(R"([{"status":"PERMITTED"}])"))) == "/territorial_rights/0");
  CHECK(refusal_field(with("usage_terms", json::parse(R"([{"usage_type":"ACCESS","status":"REQUIRED"}])")))
        == "/usage_terms/0/status");
  CHECK(refusal_field(with("usage_terms", json::parse(R"([{"usage_type":"AI_RETRIEVAL","status":"PERMITTED","method":"FAX"}])")))
        == "/usage_terms/0/method");
  CHECK(refusal_field(with("manifestation_rights", json::parse(R"([{"manifestation_type":"SCROLL","status":"PERMITTED"}])")))
        == "/manifestation_rights/0/manifestation_type");
  CHECK(refusal_field(with("commercial_terms", json::parse(R"({"royalties":[{"rate_percent":120}]})")))
        == "/commercial_terms/royalties/0/rate_percent");
  CHECK(refusal_field(with("commercial_terms", json::parse(R"({"advances":[{"amount":"5k","currency":"EUR"}]})")))
        == "/commercial_terms/advances/0/amount");
  CHECK(refusal_field(with("surprise", true)) == "/surprise");
  // update_token belongs to a new version only.
  CHECK(refusal_field(with("update_token", "x")) == "/update_token");
  CHECK(std::holds_alternative<contract_draft>(parse_contract(with("update_token", "x"), true)));
}
