// Rights that travel (domain/odrl.hpp, docs/rights.md): the ODRL policy, the headers and the
// TDMRep documents made from one resolution. The independent check (JSON-LD expansion, SHACL, an
// evaluator of its own over 1,000 generated contracts) is tests/client/rights_travel.py.

#include "domain/odrl.hpp"
#include "domain/rights.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>

using namespace cl::domain;
namespace json = boost::json;

namespace {

const std::int64_t now = *parse_utc("2026-11-22T12:00:00Z");
const std::int64_t day = 86400;

contract_view contract(std::vector<contract_view::usage> usage, std::vector<contract_view::territory> territory) {
  contract_view c;
  c.id = "ctr_a";
  c.version = 3;
  c.status = "ACTIVE";
  c.valid_from = now - day;
  c.valid_until = now + day;
  c.work_ids = {"wk_a"};
  c.usage_terms = std::move(usage);
  c.territorial_rights = std::move(territory);
  return c;
}

platform_policy shipped_like() {
  platform_policy p;
  p.version = "test";
  p.explicit_permission_usages = {"AI_TRAINING"};
  p.embargoed_territories = {"KP"};
  p.required_handling = {"ATTRIBUTION"};
  return p;
}

json::object policy_of(const resolved_rights& r) {
  return json::parse(odrl_policy(r, {"t_a", "u_alice", "cl://t_a/DOCUMENT/res_a/ver_a"})).as_object();
}

/// The actions of `rules` (`permission` or `prohibition`), a refined one as "<iri>@<channel>".
std::vector<std::string> actions(const json::object& policy, const char* rules) {
  std::vector<std::string> out;
  auto* list = policy.if_contains(rules);
  if (!list) return out;
  for (const auto& rule : list->as_array()) {
    const auto& a = rule.as_object().at("action");
    if (a.is_string()) {
      out.emplace_back(a.as_string());
      continue;
    }
    const auto& refined = a.as_array().at(0).as_object();
    out.push_back(std::string{refined.at("rdf:value").as_object().at("@id").as_string()} + "@"
                  + std::string{refined.at("refinement").as_array().at(0).as_object().at("rightOperand").as_object().at("@id").as_string()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string header(const resolved_rights& r, const std::string& name) {
  for (const auto& [k, v] : rights_headers(r, "/p")) if (k == name) return v;
  return "";
}

}  // namespace

TEST_CASE("no contract: read and display permitted, no AI use, every AI preference no", "[odrl]") {
  auto r = resolve_rights({}, shipped_like(), now);
  auto p = policy_of(r);
  CHECK(p.at("@type") == "Agreement");
  CHECK(p.at("assigner") == "cl://t_a");
  CHECK(p.at("assignee") == "cl://t_a/principal/u_alice");
  CHECK(p.at("target") == "cl://t_a/DOCUMENT/res_a/ver_a");
  CHECK(p.at("conflict") == "prohibit");
  CHECK(actions(p, "permission") == std::vector<std::string>{"display", "read"});
  CHECK(actions(p, "prohibition").empty());
  CHECK(p.at("dct:source").as_array().empty());
  CHECK(header(r, "Content-Usage") == "train-ai=n, search=n");
  CHECK(header(r, "tdm-reservation") == "1");
  CHECK(header(r, "tdm-policy") == "/p");
}

TEST_CASE("usage terms map to actions, methods to a delivery channel, the merged exception kept", "[odrl]") {
  auto c = contract({{"ACCESS", "PROHIBITED", "", "embargoed"},
                     {"AI_RETRIEVAL", "PERMITTED", "", ""},
                     {"AI_RETRIEVAL", "PROHIBITED", "STREAM", ""},
                     {"AI_TRAINING", "PERMITTED", "MCP", ""},
                     {"DERIVE", "PERMITTED", "", ""}},
                    {{true, {}, "PERMITTED"}});
  auto r = resolve_rights({c}, shipped_like(), now);
  auto p = policy_of(r);
  // ACCESS prohibited: no permission of read; DISPLAY permitted by default.
  CHECK(actions(p, "permission")
        == std::vector<std::string>{"clx:aiRetrieval", "clx:aiTraining@clx:mcp", "derive", "display"});
  CHECK(actions(p, "prohibition") == std::vector<std::string>{"clx:aiRetrieval@clx:stream", "read", "use"});
  bool described = false;
  for (const auto& rule : p.at("prohibition").as_array())
    if (rule.as_object().at("action") == "read") described = rule.as_object().at("dct:description") == "embargoed";
  CHECK(described);
  // AI_TRAINING is permitted by MCP only: no method-less permission, so train-ai=n; retrieval yes.
  CHECK(header(r, "Content-Usage") == "train-ai=n, search=y");
  CHECK(header(r, "tdm-reservation") == "1");
  CHECK(p.at("dct:source").as_array().at(0).as_object().at("@id") == "cl://t_a/contract/ctr_a/3");
}

TEST_CASE("territories, the window and required handling become constraints and duties", "[odrl]") {
  auto c = contract({{"AI_TRAINING", "PERMITTED", "", ""}, {"AI_RETRIEVAL", "PERMITTED", "", ""}},
                    {{false, {"DE", "FR"}, "PERMITTED"}, {false, {"RU"}, "PROHIBITED"}});
  auto r = resolve_rights({c}, shipped_like(), now);
  CHECK(header(r, "Content-Usage") == "train-ai=y, search=y");
  CHECK(header(r, "tdm-reservation") == "0");
  auto p = policy_of(r);
  for (const auto& rule : p.at("permission").as_array()) {
    const auto& o = rule.as_object();
    std::vector<std::string> seen;
    for (const auto& k : o.at("constraint").as_array()) {
      const auto& kk = k.as_object();
      seen.push_back(std::string{kk.at("leftOperand").as_string()} + " " + std::string{kk.at("operator").as_string()});
      if (kk.at("leftOperand") == "dateTime" && kk.at("operator") == "lt")
        CHECK(kk.at("rightOperand").as_object().at("@value").as_string() == format_utc(now + day));
      if (kk.at("leftOperand") == "spatial")
        CHECK(kk.at("rightOperand").as_array().size() == 2);
    }
    CHECK(seen == std::vector<std::string>{"dateTime gteq", "dateTime lt", "spatial isAnyOf"});
    CHECK(o.at("duty").as_array().at(0).as_object().at("action") == "attribute");
  }
  // One prohibition of any use, in RU and the embargoed KP.
  REQUIRE(actions(p, "prohibition") == std::vector<std::string>{"use"});
  const auto& spatial = p.at("prohibition").as_array().at(0).as_object().at("constraint").as_array().back().as_object();
  CHECK(spatial.at("leftOperand") == "spatial");
  CHECK(json::serialize(spatial.at("rightOperand"))
        == R"([{"@id":"iso3166:KP"},{"@id":"iso3166:RU"}])");
  CHECK(json::serialize(p.at("@context"))
        == R"(["http://www.w3.org/ns/odrl.jsonld",{"clx":"https://w3id.org/contentlake/odrl#","iso3166":"https://www.iso.org/obp/ui/#iso:code:3166:"}])");
}

TEST_CASE("the policy's tag is stable for one resolution and caller, and moves with either", "[odrl]") {
  auto c = contract({{"ACCESS", "PERMITTED", "", ""}}, {{true, {}, "PERMITTED"}});
  auto a = resolve_rights({c}, shipped_like(), now);
  auto b = resolve_rights({c}, shipped_like(), now + 5);  // another second, the same resolution
  odrl_parties alice{"t_a", "u_alice", "cl://t_a/DOCUMENT/res_a/ver_a"};
  odrl_parties bob{"t_a", "u_bob", "cl://t_a/DOCUMENT/res_a/ver_a"};
  CHECK(odrl_tag(a, alice) == odrl_tag(b, alice));
  CHECK(odrl_tag(a, alice) != odrl_tag(a, bob));
  c.version = 4;
  c.usage_terms.push_back({"DERIVE", "PERMITTED", "", ""});
  CHECK(odrl_tag(resolve_rights({c}, shipped_like(), now), alice) != odrl_tag(a, alice));
}

TEST_CASE("identifiers become IRIs: bytes an IRI may not hold are percent-encoded", "[odrl]") {
  CHECK(iri_escape("t_a") == "t_a");
  CHECK(iri_escape("a b<c>%\"") == "a%20b%3Cc%3E%25%22");
  auto r = resolve_rights({}, shipped_like(), now);
  auto p = json::parse(odrl_policy(r, {"t a", "u_{x}", "cl://t a/X/res/ver"})).as_object();
  CHECK(p.at("assigner") == "cl://t%20a");
  CHECK(p.at("assignee") == "cl://t%20a/principal/u_%7Bx%7D");
  CHECK(p.at("target") == "cl://t%20a/X/res/ver");
}

TEST_CASE("tdmrep.json reserves every content path and points at the offer", "[odrl]") {
  auto doc = json::parse(tdmrep_json("/v0/rights/tdm-policy")).as_array();
  REQUIRE(doc.size() == 1);
  CHECK(doc[0].as_object().at("tdm-reservation") == 1);
  CHECK(doc[0].as_object().at("location") == "/v0/content-lake/*");
  auto offer = json::parse(tdm_offer_json("")).as_object();
  CHECK(offer.at("@type") == "Offer");
  CHECK(offer.at("permission").as_array().at(0).as_object().at("action") == "tdm:mine");
}
