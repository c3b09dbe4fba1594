// The rights resolver's rules (docs/rights.md), one row each, plus the policy parser.

#include "domain/rights.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::domain;
namespace json = boost::json;

namespace {

const std::int64_t now = *parse_utc("2026-11-22T12:00:00Z");
const std::int64_t day = 86400;

contract_view contract(std::string id, std::vector<contract_view::usage> usage,
                       std::vector<contract_view::territory> territory = {{true, {}, "PERMITTED"}}) {
  contract_view c;
  c.id = std::move(id);
  c.version = 1;
  c.status = "ACTIVE";
  c.valid_from = now - day;
  c.work_ids = {"wk_a"};
  c.usage_terms = std::move(usage);
  c.territorial_rights = std::move(territory);
  return c;
}

platform_policy no_policy() {
  platform_policy p;
  p.version = "test";
  return p;
}

/// The status of usage `type` (and `method`) in a resolution, or "" when it is not listed.
std::string usage_status(const resolved_rights& r, const std::string& type, const std::string& method = "") {
  auto parsed = json::parse(r.json);
  for (const auto& u : parsed.as_object().at("usage_terms").as_array()) {
    const auto& o = u.as_object();
    std::string m = o.contains("method") ? std::string{o.at("method").as_string()} : "";
    if (o.at("usage_type").as_string() == type && m == method) return std::string{o.at("status").as_string()};
  }
  return "";
}

json::object rights_of(const resolved_rights& r) { return json::parse(r.json).as_object(); }

}  // namespace

TEST_CASE("rights rules, one row each", "[rights]") {
  const contract_view::usage access{"ACCESS", "PERMITTED", "", ""};
  const contract_view::usage display{"DISPLAY", "PERMITTED", "", ""};

  SECTION("R1: no contract in force -> usable false, every list empty") {
    auto r = resolve_rights({}, no_policy(), now);
    CHECK_FALSE(r.usable);
    auto o = rights_of(r);
    CHECK(o.at("usage_terms").as_array().empty());
    CHECK(o.at("basis").as_array().empty());
    CHECK(o.at("resolved_at").as_string() == "2026-11-22T12:00:00Z");
  }
  SECTION("R2: an ACTIVE contract in its window contributes; it is listed in contracts and basis") {
    auto r = resolve_rights({contract("ctr_a", {access, display})}, no_policy(), now);
    CHECK(r.usable);
    CHECK(usage_status(r, "DISPLAY") == "PERMITTED");
    auto o = rights_of(r);
    CHECK(json::serialize(o.at("basis")) == R"([{"contract_id":"ctr_a","contract_version":1}])");
    CHECK(json::serialize(o.at("contracts")) == R"([{"id":"ctr_a","status":"ACTIVE","version":1}])");
  }
  SECTION("R3: a contract that is not ACTIVE contributes nothing") {
    for (const char* status : {"DRAFT", "SUSPENDED", "TERMINATED"}) {
      auto c = contract("ctr_a", {access});
      c.status = status;
      CHECK_FALSE(resolve_rights({c}, no_policy(), now).usable);
    }
  }
  SECTION("R4: a contract outside its window contributes nothing (valid_from inclusive, valid_until exclusive)") {
    auto future = contract("ctr_a", {access});
    future.valid_from = now + 1;
    CHECK_FALSE(resolve_rights({future}, no_policy(), now).usable);
    auto ended = contract("ctr_a", {access});
    ended.valid_until = now;
    CHECK_FALSE(resolve_rights({ended}, no_policy(), now).usable);
    auto starts_now = contract("ctr_a", {access});
    starts_now.valid_from = now;
    CHECK(resolve_rights({starts_now}, no_policy(), now).usable);
  }
  SECTION("R5: a prohibition beats a permission, across contracts") {
    auto r = resolve_rights({contract("ctr_a", {access, {"DERIVE", "PERMITTED", "", ""}}),
                             contract("ctr_b", {{"DERIVE", "PROHIBITED", "", "no adaptations"}})},
                            no_policy(), now);
    CHECK(usage_status(r, "DERIVE") == "PROHIBITED");
    CHECK(usage_status(r, "ACCESS") == "PERMITTED");
    CHECK(json::serialize(rights_of(r).at("usage_terms")).find("no adaptations") != std::string::npos);
  }
  SECTION("R6: terms with a method are separate from the same usage without one") {
    auto r = resolve_rights({contract("ctr_a", {access, {"AI_RETRIEVAL", "PERMITTED", "MCP", ""},
                                                {"AI_RETRIEVAL", "PROHIBITED", "STREAM", ""}})},
                            no_policy(), now);
    CHECK(usage_status(r, "AI_RETRIEVAL", "MCP") == "PERMITTED");
    CHECK(usage_status(r, "AI_RETRIEVAL", "STREAM") == "PROHIBITED");
  }
  SECTION("R7: policy prohibitions beat a contract's permission") {
    auto p = no_policy();
    p.prohibited_usages = {"DERIVE"};
    auto r = resolve_rights({contract("ctr_a", {access, {"DERIVE", "PERMITTED", "", ""}})}, p, now);
    CHECK(usage_status(r, "DERIVE") == "PROHIBITED");
  }
  SECTION("R8: a usage needing explicit permission is prohibited unless a contract permits it") {
    auto p = no_policy();
    p.explicit_permission_usages = {"AI_TRAINING"};
    CHECK(usage_status(resolve_rights({contract("ctr_a", {access})}, p, now), "AI_TRAINING") == "PROHIBITED");
    CHECK(usage_status(resolve_rights({contract("ctr_a", {access, {"AI_TRAINING", "PERMITTED", "", ""}})}, p, now),
                       "AI_TRAINING")
          == "PERMITTED");
  }
  SECTION("R9: embargoed territories are prohibited whatever the contracts grant") {
    auto p = no_policy();
    p.embargoed_territories = {"KP"};
    auto r = resolve_rights({contract("ctr_a", {access}, {{false, {"FR", "KP"}, "PERMITTED"}})}, p, now);
    auto t = json::serialize(rights_of(r).at("territorial_rights"));
    CHECK(t == R"([{"territory_codes":["FR"],"status":"PERMITTED"},{"territory_codes":["KP"],"status":"PROHIBITED"}])");
    CHECK(r.usable);
  }
  SECTION("R10: REQUIRED handling terms accumulate from contracts and policy") {
    auto p = no_policy();
    p.required_handling = {"ATTRIBUTION"};
    auto a = contract("ctr_a", {access});
    a.handling_terms = {{"COPYRIGHT_NOTICE", "REQUIRED"}};
    auto b = contract("ctr_b", {access});
    b.handling_terms = {{"COPYRIGHT_NOTICE", "PERMITTED"}, {"LINK_BACK", "REQUIRED"}};
    auto h = json::serialize(rights_of(resolve_rights({a, b}, p, now)).at("handling_terms"));
    CHECK(h == R"([{"handling_type":"ATTRIBUTION","status":"REQUIRED"},)"
               R"({"handling_type":"COPYRIGHT_NOTICE","status":"REQUIRED"},{"handling_type":"LINK_BACK","status":"REQUIRED"}])");
  }
  SECTION("R11: usable needs ACCESS permitted and a permitted territory") {
    CHECK_FALSE(resolve_rights({contract("ctr_a", {display})}, no_policy(), now).usable);
    CHECK_FALSE(resolve_rights({contract("ctr_a", {access}, {{true, {}, "PROHIBITED"}})}, no_policy(), now).usable);
    CHECK(resolve_rights({contract("ctr_a", {access})}, no_policy(), now).usable);
  }
  SECTION("R12: a resolution holds until the next window edge of any listed contract") {
    auto ending = contract("ctr_a", {access});
    ending.valid_until = now + 3600;
    auto starting = contract("ctr_b", {access});
    starting.valid_from = now + 600;
    CHECK(resolve_rights({ending, starting}, no_policy(), now).valid_until == now + 600);
    CHECK(resolve_rights({contract("ctr_a", {access})}, no_policy(), now).valid_until
          == std::numeric_limits<std::int64_t>::max());
  }
  SECTION("R13: the digest (and so the hash) changes with a contract version or the policy, not with the time") {
    auto c = contract("ctr_a", {access});
    auto first = resolve_rights({c}, no_policy(), now);
    CHECK(resolve_rights({c}, no_policy(), now + 5).digest_input == first.digest_input);
    c.version = 2;
    CHECK(resolve_rights({c}, no_policy(), now).digest_input != first.digest_input);
    auto p = no_policy();
    p.version = "next";
    CHECK(resolve_rights({contract("ctr_a", {access})}, p, now).digest_input != first.digest_input);
  }
}

TEST_CASE("the platform policy file is parsed strictly", "[rights]") {
  auto ok = parse_policy(R"({"version":"1","explicit_permission_usages":["AI_TRAINING"],)"
                         R"("embargoed_territories":["KP"],"required_handling":["ATTRIBUTION"]})");
  REQUIRE(std::holds_alternative<platform_policy>(ok));
  CHECK(std::get<platform_policy>(ok).embargoed_territories == std::vector<std::string>{"KP"});
  CHECK(std::holds_alternative<std::string>(parse_policy(R"({"explicit_permission_usages":[]})")));
  CHECK(std::holds_alternative<std::string>(parse_policy(R"({"version":"1","prohibited_usages":["EATING"]})")));
  CHECK(std::holds_alternative<std::string>(parse_policy(R"({"version":"1","embargoed_territories":["kp"]})")));
  CHECK(std::holds_alternative<std::string>(parse_policy(R"({"version":"1","surprise":true})")));
}

TEST_CASE("UTC timestamps round-trip", "[rights]") {
  CHECK(format_utc(*parse_utc("2024-02-29T23:59:59Z")) == "2024-02-29T23:59:59Z");
  CHECK(format_utc(0) == "1970-01-01T00:00:00Z");
  CHECK_FALSE(parse_utc("2023-02-29T00:00:00Z"));
  CHECK_FALSE(parse_utc("2026-11-22 12:00:00"));
  CHECK(*parse_utc("2026-11-22T12:00:00Z") - *parse_utc("2026-11-21T12:00:00Z") == 86400);
}

TEST_CASE("layer 3: uses of content against resolved rights", "[rights][usage]") {
  auto use = [](const char* header) {
    auto parsed = parse_content_use(*header ? std::optional<std::string_view>{header} : std::nullopt);
    REQUIRE(std::holds_alternative<content_use>(parsed));
    return std::get<content_use>(parsed);
  };
  CHECK(use("").usage.empty());
  CHECK(use(" AI_RETRIEVAL ; method=MCP ").method == "MCP");
  CHECK(std::holds_alternative<api_error>(parse_content_use("ACCESS")));
  // Sent but empty or blank: refused, not a plain read.
  CHECK(std::holds_alternative<api_error>(parse_content_use("")));
  CHECK(std::holds_alternative<api_error>(parse_content_use(" \t")));
  CHECK(std::get<content_use>(parse_content_use(std::nullopt)).usage.empty());
  CHECK(std::holds_alternative<api_error>(parse_content_use("AI_TRAINING; style=fast")));

  auto nothing = no_contract_rights("2026-11-22T12:00:00Z");
  CHECK_FALSE(check_content_use(nothing, use("")));  // readable, usable false
  auto refused = check_content_use(nothing, use("AI_TRAINING"));
  REQUIRE(refused);
  CHECK(refused->id == error_id::usage_prohibited);
  CHECK(refused->details.at(0).field == "usage");

  auto rights = resolve_rights({contract("ctr_a", {{"ACCESS", "PERMITTED", "", ""},
                                                   {"AI_RETRIEVAL", "PERMITTED", "", ""},
                                                   {"AI_RETRIEVAL", "PROHIBITED", "STREAM", ""},
                                                   {"DISPLAY", "PROHIBITED", "", ""}})},
                               no_policy(), now);
  CHECK(check_content_use(rights, use("")));  // DISPLAY prohibited: a plain read is refused
  CHECK_FALSE(check_content_use(rights, use("AI_RETRIEVAL")));
  CHECK_FALSE(check_content_use(rights, use("AI_RETRIEVAL; method=MCP")));  // the method-less permission covers it
  CHECK(check_content_use(rights, use("AI_RETRIEVAL; method=STREAM")));    // a method-specific prohibition wins
  CHECK(check_content_use(rights, use("AI_TRAINING")));                    // nothing permits it
}

TEST_CASE("possible answers of a tenant: never false where some Resource's rights answer so", "[rights][search]") {
  auto use = [](const std::string& header) {
    return header.empty() ? content_use{} : std::get<content_use>(parse_content_use(header));
  };
  const std::vector<std::string> uses = {"", "AI_RETRIEVAL", "AI_RETRIEVAL; method=MCP", "AI_TRAINING"};

  SECTION("a tenant without contracts: plain reads only allowed, declared purposes only refused") {
    for (const auto& u : uses) {
      auto p = possible_content_answers(use(u), {}, no_policy());
      CHECK(p.allowed == u.empty());
      CHECK(p.refused == !u.empty());
    }
  }
  SECTION("the policy alone can refuse plain reads, and prohibit what a contract permits") {
    auto policy = no_policy();
    policy.explicit_permission_usages = {"DISPLAY"};
    CHECK(possible_content_answers(use(""), {}, policy).refused);
    policy = no_policy();
    policy.prohibited_usages = {"AI_RETRIEVAL"};
    CHECK_FALSE(possible_content_answers(use("AI_RETRIEVAL"), {{"AI_RETRIEVAL", "PERMITTED"}}, policy).allowed);
    CHECK(possible_content_answers(use("AI_TRAINING"), {{"AI_TRAINING", "PERMITTED"}}, policy).allowed);
    CHECK_FALSE(possible_content_answers(use("AI_TRAINING"), {{"AI_TRAINING", "PROHIBITED"}}, policy).allowed);
  }
  SECTION("every subset of a tenant's contracts, resolved, answers only what was possible") {
    const std::vector<std::vector<contract_view>> tenants = {
      {contract("ctr_a", {{"ACCESS", "PERMITTED", "", ""}, {"DISPLAY", "PERMITTED", "", ""}})},
      {contract("ctr_a", {{"ACCESS", "PERMITTED", "", ""}, {"AI_RETRIEVAL", "PERMITTED", "MCP", ""}}),
       contract("ctr_b", {{"DISPLAY", "PROHIBITED", "", ""}})},
      {contract("ctr_a", {{"AI_RETRIEVAL", "PERMITTED", "", ""}, {"AI_RETRIEVAL", "PROHIBITED", "MCP", ""}}),
       contract("ctr_b", {{"AI_TRAINING", "PERMITTED", "", ""}, {"ACCESS", "PROHIBITED", "", ""}})},
    };
    for (std::size_t t = 0; t < tenants.size(); ++t) {
      const auto& contracts = tenants[t];
      std::vector<usage_named> named;
      for (const auto& c : contracts)
        for (const auto& u : c.usage_terms) named.emplace_back(u.type, u.status);
      for (const auto& u : uses) {
        auto possible = possible_content_answers(use(u), named, no_policy());
        bool seen_allowed = false, seen_refused = false;
        for (unsigned subset = 0; subset < (1u << contracts.size()); ++subset) {
          std::vector<contract_view> covering;
          for (std::size_t i = 0; i < contracts.size(); ++i)
            if (subset & (1u << i)) covering.push_back(contracts[i]);
          auto rights = covering.empty() ? no_contract_rights("2026-11-22T12:00:00Z")
                                         : resolve_rights(covering, no_policy(), now);
          (check_content_use(rights, use(u)) ? seen_refused : seen_allowed) = true;
        }
        INFO("tenant " << t << ", use '" << u << "'");
        // Conservative: what some Resource answers was possible (the exact false cases are above).
        CHECK((possible.allowed || !seen_allowed));
        CHECK((possible.refused || !seen_refused));
        if (u.empty()) CHECK(possible.refused == (t > 0));  // only a prohibition of ACCESS or DISPLAY
      }
    }
  }
}
