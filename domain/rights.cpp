#include "domain/rights.hpp"

#include "domain/json_text.hpp"
#include "domain/odrl.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace cl::domain {

namespace json = boost::json;

namespace {

/// The usages a plain read (no declared purpose) makes of content.
constexpr const char* plain_read_usages[] = {"ACCESS", "DISPLAY"};

const char* const empty_terms =
  R"("usable":false,"contracts":[],"territorial_rights":[],"manifestation_rights":[],"usage_terms":[],)"
  R"("handling_terms":[],"basis":[])";

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

/// Prohibition beats permission (ODRL's `prohibit` conflict strategy).
void merge_grant(std::string& current, const std::string& incoming) {
  if (current.empty() || incoming == "PROHIBITED") current = incoming;
}

bool in_force(const contract_view& c, std::int64_t at) {
  return c.status == "ACTIVE" && c.valid_from <= at && (!c.valid_until || at < *c.valid_until);
}

}  // namespace

resolved_rights no_contract_rights(std::string_view resolved_at) {
  resolved_rights r;
  r.digest_input = std::string{"{"} + empty_terms + "}";
  r.json = std::string{"{"} + empty_terms + ",\"resolved_at\":" + json_string(resolved_at) + "}";
  r.resolved_at = std::string{resolved_at};
  r.odrl_rules = odrl_rules({});
  r.odrl_key = odrl_resolution_key(r);
  return r;
}

std::variant<platform_policy, std::string> parse_policy(std::string_view text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::string{"policy: not a JSON object"};
  const auto& o = v.as_object();
  platform_policy p;
  static const std::vector<std::string> members = {"version", "prohibited_usages", "explicit_permission_usages",
                                                   "embargoed_territories", "required_handling", "description"};
  for (const auto& m : o)
    if (!contains(members, std::string{m.key()})) return "policy: unknown member " + std::string{m.key()};
  auto* version = o.if_contains("version");
  if (!version || !version->is_string() || version->as_string().empty())
    return std::string{"policy: version must be a non-empty string"};
  p.version = std::string{version->as_string()};
  auto list = [&](const char* name, const std::vector<std::string>& allowed, std::vector<std::string>& out,
                  const std::regex* shape) -> std::optional<std::string> {
    auto* l = o.if_contains(name);
    if (!l) return std::nullopt;
    if (!l->is_array()) return "policy: " + std::string{name} + " must be an array of strings";
    for (const auto& item : l->as_array()) {
      if (!item.is_string()) return "policy: " + std::string{name} + " must be an array of strings";
      std::string s{item.as_string()};
      if (!allowed.empty() && !contains(allowed, s)) return "policy: " + std::string{name} + " holds unknown " + s;
      if (shape && !std::regex_match(s, *shape)) return "policy: " + std::string{name} + " holds malformed " + s;
      out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return std::nullopt;
  };
  static const std::regex code{R"(^[A-Z]{2}$)"};
  if (auto e = list("prohibited_usages", usage_types(), p.prohibited_usages, nullptr)) return *e;
  if (auto e = list("explicit_permission_usages", usage_types(), p.explicit_permission_usages, nullptr)) return *e;
  if (auto e = list("embargoed_territories", {}, p.embargoed_territories, &code)) return *e;
  if (auto e = list("required_handling", handling_types(), p.required_handling, nullptr)) return *e;
  return p;
}

namespace {

/// The terms of every contract in force, merged: prohibition beats permission.
struct merged_terms {
  /// (usage type, method) -> (status, exception)
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> usage;
  std::string worldwide;                             ///< status of a worldwide grant, if any
  std::map<std::string, std::string> codes;          ///< territory code -> status
  std::map<std::string, std::string> manifestations;  ///< manifestation type -> status
  std::map<std::string, std::string> handling;       ///< handling type -> status
};

/// The next window edge after `at` of any contract that lists the Work: the resolution holds until then.
std::int64_t next_edge(const std::vector<contract_view>& contracts, std::int64_t at, std::int64_t until) {
  for (const auto& c : contracts) {
    if (c.valid_from > at) until = std::min(until, c.valid_from);
    if (c.valid_until && *c.valid_until > at) until = std::min(until, *c.valid_until);
  }
  return until;
}

/// The last window edge at or before `at` of any contract that lists the Work: the resolution holds since then.
std::int64_t last_edge(const std::vector<contract_view>& contracts, std::int64_t at, std::int64_t since) {
  for (const auto& c : contracts) {
    if (c.valid_from <= at) since = std::max(since, c.valid_from);
    if (c.valid_until && *c.valid_until <= at) since = std::max(since, *c.valid_until);
  }
  return since;
}

/// The contracts in force at `at`, by id.
std::vector<const contract_view*> in_force_at(const std::vector<contract_view>& contracts, std::int64_t at) {
  std::vector<const contract_view*> active;
  for (const auto& c : contracts)
    if (in_force(c, at)) active.push_back(&c);
  std::sort(active.begin(), active.end(), [](auto* a, auto* b) { return a->id < b->id; });
  return active;
}

merged_terms merge_contracts(const std::vector<const contract_view*>& active) {
  merged_terms m;
  for (const auto* c : active) {
    for (const auto& u : c->usage_terms) {
      auto& slot = m.usage[{u.type, u.method}];
      auto before = slot.first;
      merge_grant(slot.first, u.status);
      if (slot.first != before || (slot.first == u.status && slot.second.empty())) slot.second = u.exception;
    }
    for (const auto& t : c->territorial_rights) {
      if (t.worldwide) merge_grant(m.worldwide, t.status);
      for (const auto& code : t.codes) merge_grant(m.codes[code], t.status);
    }
    for (const auto& mr : c->manifestation_rights) merge_grant(m.manifestations[mr.type], mr.status);
    for (const auto& h : c->handling_terms) {
      auto& slot = m.handling[h.type];
      // REQUIRED handling accumulates; among the rest, prohibition beats permission.
      if (h.status == "REQUIRED" || slot == "REQUIRED") slot = "REQUIRED";
      else merge_grant(slot, h.status);
    }
  }
  return m;
}

/// Policy: prohibitions beat every contract; some usages need an explicit permission.
void apply_policy(merged_terms& m, const platform_policy& policy) {
  for (const auto& u : policy.explicit_permission_usages) {
    bool permitted = false;
    for (const auto& [key, value] : m.usage)
      if (key.first == u && value.first == "PERMITTED") permitted = true;
    if (!permitted) m.usage[{u, ""}] = {"PROHIBITED", "platform policy: needs an explicit contract permission"};
  }
  for (const auto& u : policy.prohibited_usages) {
    bool any = false;
    for (auto& [key, value] : m.usage)
      if (key.first == u) {
        value = {"PROHIBITED", "platform policy"};
        any = true;
      }
    if (!any) m.usage[{u, ""}] = {"PROHIBITED", "platform policy"};
  }
  for (const auto& code : policy.embargoed_territories) m.codes[code] = "PROHIBITED";
  for (const auto& h : policy.required_handling) m.handling[h] = "REQUIRED";
}

/// Usable: a contract in force, reading (ACCESS) permitted, and somewhere to read it.
bool usable(const merged_terms& m) {
  bool access = false;
  for (const auto& [key, value] : m.usage)
    if (key.first == "ACCESS" && value.first == "PERMITTED") access = true;
  bool any_territory = m.worldwide == "PERMITTED" || std::any_of(m.codes.begin(), m.codes.end(), [](auto& kv) {
                         return kv.second == "PERMITTED";
                       });
  return access && any_territory;
}

json::array territories_json(const merged_terms& m) {
  json::array territories;
  if (!m.worldwide.empty()) territories.push_back(json::object{{"worldwide", true}, {"status", m.worldwide}});
  for (const char* status : {"PERMITTED", "PROHIBITED"}) {
    json::array list;
    for (const auto& [code, s] : m.codes)
      if (s == status) list.emplace_back(code);
    if (!list.empty()) territories.push_back(json::object{{"territory_codes", std::move(list)}, {"status", status}});
  }
  return territories;
}

/// The rights object (spec 2.3) of `m`; fills `out.usage_terms`, `digest_input` and `json`.
void render(const merged_terms& m, const std::vector<const contract_view*>& active, const platform_policy& policy,
            std::int64_t at, resolved_rights& out) {
  json::object r;
  r["usable"] = out.usable;
  json::array cs, basis;
  for (const auto* c : active) {
    cs.push_back(json::object{{"id", c->id}, {"status", c->status}, {"version", c->version}});
    basis.push_back(json::object{{"contract_id", c->id}, {"contract_version", c->version}});
    out.basis.emplace_back(c->id, c->version);
  }
  r["contracts"] = std::move(cs);
  r["territorial_rights"] = territories_json(m);
  json::array ms;
  for (const auto& [type, status] : m.manifestations)
    ms.push_back(json::object{{"manifestation_type", type}, {"status", status}});
  r["manifestation_rights"] = std::move(ms);
  json::array us;
  for (const auto& [key, value] : m.usage) {
    out.usage_terms.push_back({key.first, key.second, value.first});
    json::object u{{"usage_type", key.first}, {"status", value.first}};
    if (!key.second.empty()) u["method"] = key.second;
    if (!value.second.empty()) u["exception"] = value.second;
    us.push_back(std::move(u));
  }
  r["usage_terms"] = std::move(us);
  json::array hs;
  for (const auto& [type, status] : m.handling) hs.push_back(json::object{{"handling_type", type}, {"status", status}});
  r["handling_terms"] = std::move(hs);
  r["basis"] = std::move(basis);
  r["policy_version"] = policy.version;
  out.digest_input = json::serialize(r);
  out.resolved_at = format_utc(at);
  r["resolved_at"] = out.resolved_at;
  out.json = json::serialize(r);
}

/// The merged terms as the ODRL rules are made from them, in the window [since, until).
odrl_terms travel_terms(const merged_terms& m, std::int64_t since, std::int64_t until) {
  odrl_terms t;
  for (const auto& [key, value] : m.usage) t.usage_terms.push_back({key.first, key.second, value.first, value.second});
  t.worldwide = m.worldwide;
  for (const auto& [code, status] : m.codes)
    (status == "PERMITTED" ? t.permitted_codes : t.prohibited_codes).push_back(code);
  for (const auto& [type, status] : m.manifestations)
    (status == "PERMITTED" ? t.permitted_media : t.prohibited_media).push_back(type);
  for (const auto& [type, status] : m.handling) t.handling.emplace_back(type, status);
  if (since != std::numeric_limits<std::int64_t>::min()) t.from = since;
  if (until != std::numeric_limits<std::int64_t>::max()) t.until = until;
  return t;
}

}  // namespace

resolved_rights resolve_rights(const std::vector<contract_view>& contracts, const platform_policy& policy,
                               std::int64_t at) {
  resolved_rights out;
  out.valid_until = next_edge(contracts, at, out.valid_until);
  out.in_force_since = last_edge(contracts, at, out.in_force_since);
  auto active = in_force_at(contracts, at);
  if (active.empty()) {
    auto r = no_contract_rights(format_utc(at));
    r.valid_until = out.valid_until;
    r.in_force_since = out.in_force_since;
    r.odrl_rules = odrl_rules(travel_terms({}, r.in_force_since, r.valid_until));
    r.odrl_key = odrl_resolution_key(r);
    return r;
  }
  auto terms = merge_contracts(active);
  apply_policy(terms, policy);
  out.usable = usable(terms);
  render(terms, active, policy, at, out);
  out.odrl_rules = odrl_rules(travel_terms(terms, out.in_force_since, out.valid_until));
  out.train_ai = !check_content_use(out, {"AI_TRAINING", ""});
  out.search = !check_content_use(out, {"AI_RETRIEVAL", ""});
  out.odrl_key = odrl_resolution_key(out);
  return out;
}

std::variant<content_use, api_error> parse_content_use(std::optional<std::string_view> sent) {
  content_use use;
  if (!sent) return use;
  auto header = *sent;
  auto trim = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  };
  header = trim(header);
  auto refuse = [] {
    return api_error{error_id::invalid_argument,
                     "X-Usage-Purpose must be AI_RETRIEVAL or AI_TRAINING, optionally followed by ; method=STREAM or MCP.",
                     {{"X-Usage-Purpose", "AI_RETRIEVAL | AI_TRAINING [; method=STREAM | MCP]"}}};
  };
  if (header.empty()) return refuse();
  auto semi = header.find(';');
  use.usage = std::string{trim(header.substr(0, semi))};
  if (use.usage != "AI_RETRIEVAL" && use.usage != "AI_TRAINING") return refuse();
  if (semi != std::string_view::npos) {
    auto param = trim(header.substr(semi + 1));
    constexpr std::string_view key = "method=";
    if (param.substr(0, key.size()) != key) return refuse();
    use.method = std::string{trim(param.substr(key.size()))};
    if (!contains(usage_methods(), use.method)) return refuse();
  }
  return use;
}

std::optional<api_error> check_content_use(const resolved_rights& rights, const content_use& use) {
  auto status_of = [&](const std::string& type, const std::string& method) -> std::string {
    for (const auto& u : rights.usage_terms)
      if (u.type == type && u.method == method) return u.status;
    return "";
  };
  auto refuse = [](const std::string& usage, const std::string& method, const std::string& why) {
    std::string named = usage + (method.empty() ? "" : " (method " + method + ")");
    return api_error{error_id::usage_prohibited, "The Resource's rights do not allow " + named + ": " + why + ".",
                     {{"usage", named + ": " + why}}};
  };
  if (use.usage.empty()) {
    for (const char* plain : plain_read_usages)
      if (status_of(plain, "") == "PROHIBITED") return refuse(plain, "", "prohibited by the resolved rights");
    return std::nullopt;
  }
  auto general = status_of(use.usage, "");
  auto specific = use.method.empty() ? general : status_of(use.usage, use.method);
  if (specific == "PROHIBITED" || general == "PROHIBITED")
    return refuse(use.usage, use.method, "prohibited by the resolved rights");
  if (specific == "PERMITTED" || general == "PERMITTED") return std::nullopt;
  return refuse(use.usage, use.method, "no contract in force permits it explicitly");
}

possible_answers possible_content_answers(const content_use& use, const std::vector<usage_named>& named,
                                          const platform_policy& policy) {
  auto names = [&](const std::string& usage, const char* status) {
    return std::any_of(named.begin(), named.end(), [&](const usage_named& n) { return n.first == usage && n.second == status; });
  };
  possible_answers out;
  if (use.usage.empty()) {
    // Allowed wherever no contract is in force; refused only through a prohibition of a plain usage.
    out.refused = false;
    for (const char* plain : plain_read_usages)
      out.refused = out.refused || names(plain, "PROHIBITED") || contains(policy.prohibited_usages, plain)
                    || contains(policy.explicit_permission_usages, plain);
    return out;
  }
  // Refused wherever no contract is in force; allowed only through an explicit permission.
  out.allowed = names(use.usage, "PERMITTED") && !contains(policy.prohibited_usages, use.usage);
  return out;
}

}  // namespace cl::domain
