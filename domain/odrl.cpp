#include "domain/odrl.hpp"

#include "domain/contract.hpp"
#include "domain/json_text.hpp"
#include "domain/rights.hpp"
#include "domain/sha256.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace cl::domain {

namespace json = boost::json;

namespace {

/// ODRL's own actions where one means what ours means; the profile's (`clx:`) otherwise.
std::string action_of(std::string_view usage) {
  if (usage == "ACCESS") return "read";
  if (usage == "DISPLAY") return "display";
  if (usage == "DERIVE") return "derive";
  if (usage == "AI_RETRIEVAL") return "clx:aiRetrieval";
  if (usage == "AI_TRAINING") return "clx:aiTraining";
  return "clx:" + std::string{usage};  // a usage type the spec adds later: the profile names it
}

std::string handling_action(std::string_view type) {
  if (type == "ATTRIBUTION") return "attribute";
  if (type == "COPYRIGHT_NOTICE") return "clx:copyrightNotice";
  if (type == "LINK_BACK") return "clx:linkBack";
  return "clx:" + std::string{type};
}

/// A profile IRI for a value of ours: `STREAM` -> `clx:stream`, `AUDIOBOOK` -> `clx:audiobook`.
json::object profile_value(std::string_view value) {
  std::string name{"clx:"};
  for (char c : value) name += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return {{"@id", name}};
}

json::object territory_value(std::string_view code) {
  return {{"@id", "iso3166:" + std::string{code}}};  // the context's prefix: https://www.iso.org/obp/ui/#iso:code:3166:
}

json::object constraint(std::string_view left, std::string_view op, json::value right) {
  return {{"leftOperand", left}, {"operator", op}, {"rightOperand", std::move(right)}};
}

json::array any_of(const std::vector<std::string>& values, json::object (*as)(std::string_view)) {
  json::array out;
  for (const auto& v : values) out.push_back(as(v));
  return out;
}

json::object date_time(std::int64_t at) {
  return {{"@value", format_utc(at)}, {"@type", "xsd:dateTime"}};
}

/// The action of a rule: plain, or refined by the delivery channel of a term with a `method`.
json::value action(const std::string& usage, const std::string& method) {
  auto name = action_of(usage);
  if (method.empty()) return json::string{name};
  auto iri = name.find(':') == std::string::npos ? "odrl:" + name : name;
  return json::array{json::object{{"rdf:value", json::object{{"@id", iri}}},
                                  {"refinement", json::array{constraint("deliveryChannel", "eq", profile_value(method))}}}};
}

}  // namespace

std::string odrl_rules(const odrl_terms& t) {
  // The window every rule holds in: the resolution's own (R12).
  json::array window;
  if (t.from) window.push_back(constraint("dateTime", "gteq", date_time(*t.from)));
  if (t.until) window.push_back(constraint("dateTime", "lt", date_time(*t.until)));
  // Where and in what medium a permission may be used: the permitted territories unless the rights
  // permit worldwide; the permitted manifestations. The caller evaluates these (the service cannot
  // see either); the window and the channel are what the service enforces too.
  json::array limits = window;
  if (t.worldwide != "PERMITTED" && !t.permitted_codes.empty())
    limits.push_back(constraint("spatial", "isAnyOf", any_of(t.permitted_codes, &territory_value)));
  if (!t.permitted_media.empty())
    limits.push_back(constraint("media", "isAnyOf", any_of(t.permitted_media, &profile_value)));
  json::array duties;
  for (const auto& [type, status] : t.handling)
    if (status == "REQUIRED") duties.push_back(json::object{{"action", handling_action(type)}});

  json::array permissions, prohibitions;
  auto rule = [&](json::value act, const json::array& constraints, const std::string& note, bool with_duties) {
    json::object r{{"action", std::move(act)}};
    if (!constraints.empty()) r["constraint"] = constraints;
    if (with_duties && !duties.empty()) r["duty"] = duties;
    if (!note.empty()) r["dct:description"] = note;
    return r;
  };
  auto status_of = [&](std::string_view type) -> const odrl_terms::usage* {
    for (const auto& u : t.usage_terms)
      if (u.type == type && u.method.empty()) return &u;
    return nullptr;
  };
  // A plain read (ACCESS and DISPLAY) is permitted unless PROHIBITED, contract or not (Layer 3).
  for (const char* plain : {"ACCESS", "DISPLAY"}) {
    const auto* term = status_of(plain);
    if (!term || term->status != "PROHIBITED")
      permissions.push_back(rule(action(plain, ""), limits, term ? term->exception : std::string{}, true));
  }
  for (const auto& u : t.usage_terms) {
    bool plain = u.method.empty() && (u.type == "ACCESS" || u.type == "DISPLAY");
    if (u.status == "PERMITTED" && !plain) permissions.push_back(rule(action(u.type, u.method), limits, u.exception, true));
    if (u.status == "PROHIBITED") prohibitions.push_back(rule(action(u.type, u.method), window, u.exception, false));
  }
  // Territories and manifestations the rights prohibit: one prohibition of any use each.
  auto prohibit_use = [&](json::object c) {
    json::array constraints = window;
    constraints.push_back(std::move(c));
    prohibitions.push_back(rule(json::string{"use"}, constraints, {}, false));
  };
  if (!t.prohibited_codes.empty())
    prohibit_use(constraint("spatial", "isAnyOf", any_of(t.prohibited_codes, &territory_value)));
  if (t.worldwide == "PROHIBITED")
    prohibit_use(t.permitted_codes.empty() ? constraint("spatial", "eq", profile_value("worldwide"))
                                           : constraint("spatial", "isNoneOf", any_of(t.permitted_codes, &territory_value)));
  if (!t.prohibited_media.empty())
    prohibit_use(constraint("media", "isAnyOf", any_of(t.prohibited_media, &profile_value)));
  for (const auto& [type, status] : t.handling) {
    if (status == "PERMITTED") permissions.push_back(rule(json::string{handling_action(type)}, window, {}, false));
    if (status == "PROHIBITED") prohibitions.push_back(rule(json::string{handling_action(type)}, window, {}, false));
  }
  std::string out = "\"permission\":" + json::serialize(permissions);
  if (!prohibitions.empty()) out += ",\"prohibition\":" + json::serialize(prohibitions);
  return out;
}

std::string iri_escape(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool bad = c <= 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`'
               || c == '{' || c == '|' || c == '}' || c == '%';
    if (!bad) {
      out += static_cast<char>(c);
      continue;
    }
    out += '%';
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

namespace {

std::string hex_of(const sha256_digest& digest, std::size_t bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

/// `s` (text that needs no JSON escaping: an IRI `iri_escape` made, a timestamp) as a JSON string.
void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  out += s;
  out += '"';
}

}  // namespace

std::string odrl_resolution_key(const resolved_rights& rights) {
  auto input = rights.digest_input;
  input += '\n' + std::to_string(rights.in_force_since) + '\n' + std::to_string(rights.valid_until);
  return hex_of(sha256(input), 32);
}

std::string odrl_tag(const resolved_rights& rights, const odrl_parties& p) {
  std::string input = rights.odrl_key.empty() ? odrl_resolution_key(rights) : rights.odrl_key;
  for (auto part : {p.tenant, p.principal, p.target}) {
    input += '\n';
    input += part;
  }
  return hex_of(sha256(input), 16);
}

std::string odrl_policy(const resolved_rights& rights, const odrl_parties& p) {
  auto holder = "cl://" + iri_escape(p.tenant);
  std::string out;
  out.reserve(rights.odrl_rules.size() + 640 + 48 * rights.basis.size() + 2 * p.target.size());
  out = R"({"@context":["http://www.w3.org/ns/odrl.jsonld",{"clx":")";
  out += odrl_profile_iri;
  out += R"(#","iso3166":"https://www.iso.org/obp/ui/#iso:code:3166:"}],"@type":"Agreement","uid":)";
  // Every value below is an escaped IRI or a timestamp: nothing JSON would escape.
  append_quoted(out, holder + "/odrl/" + odrl_tag(rights, p));
  out += R"(,"profile":)";
  append_quoted(out, odrl_profile_iri);
  out += R"(,"conflict":"prohibit","assigner":)";
  append_quoted(out, holder);
  out += R"(,"assignee":)";
  append_quoted(out, holder + "/principal/" + iri_escape(p.principal));
  out += R"(,"target":)";
  append_quoted(out, iri_escape(p.target));
  // Provenance: when it was resolved (resolved_at) and from which contract versions (basis).
  out += R"(,"dct:issued":{"@value":)";
  append_quoted(out, rights.resolved_at);
  out += R"(,"@type":"xsd:dateTime"},"dct:source":[)";
  bool first = true;
  for (const auto& [id, version] : rights.basis) {
    if (!first) out += ',';
    first = false;
    out += R"({"@id":)";
    append_quoted(out, holder + "/contract/" + iri_escape(id) + "/" + std::to_string(version));
    out += '}';
  }
  out += "],";
  out += rights.odrl_rules;
  out += '}';
  return out;
}

namespace {

constexpr std::string_view content_usage = "Content-Usage", reservation = "tdm-reservation", policy = "tdm-policy";

}  // namespace

std::vector<std::pair<std::string, std::string>> rights_headers(const resolved_rights& rights,
                                                                std::string_view policy_path) {
  auto yn = [](bool b) { return b ? "y" : "n"; };
  return {
    {std::string{content_usage}, std::string{"train-ai="} + yn(rights.train_ai) + ", search=" + yn(rights.search)},
    {std::string{reservation}, rights.train_ai && rights.search ? "0" : "1"},
    {std::string{policy}, std::string{policy_path}},
  };
}

bool is_rights_header(std::string_view name) {
  return name == content_usage || name == reservation || name == policy;
}

std::string odrl_policy_path(std::string_view resource_id) {
  return "/v0/content-lake/resources/" + iri_escape(resource_id) + "/rights/odrl";
}

std::string tdmrep_json(std::string_view policy_path) {
  std::string out = R"([{"location":"/v0/content-lake/*","tdm-reservation":1,"tdm-policy":)";
  append_json_string(out, policy_path);
  out += "}]";
  return out;
}

std::string tdm_offer_json(std::string_view contact) {
  json::object offer{
    {"@context", json::array{"http://www.w3.org/ns/odrl.jsonld", json::object{{"tdm", "http://www.w3.org/ns/tdmrep#"}}}},
    {"@type", "Offer"},
    {"uid", "cl://service/tdm-policy"},
    {"profile", "http://www.w3.org/ns/tdmrep"},
    // The operator's contact when configured (rights.licensing_contact); the service otherwise.
    {"assigner", contact.empty() ? std::string_view{"cl://service"} : contact},
    {"permission", json::array{json::object{{"target", "cl://service/content"},
                                            {"action", "tdm:mine"},
                                            {"duty", json::array{json::object{{"action", "obtainConsent"}}}}}}},
    {"dct:description",
     "Text and data mining of this service's content is reserved (CDSM Directive art. 4(3)). A licence comes from "
     "the rights holder as a contract; once one is in force for you, every content read's tdm-reservation and "
     "tdm-policy headers say what it permits you."},
  };
  return json::serialize(offer);
}

}  // namespace cl::domain
