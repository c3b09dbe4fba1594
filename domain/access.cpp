#include "domain/access.hpp"

#include "domain/json_text.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace cl::domain {

namespace json = boost::json;

namespace {

bool id_tail(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool has_prefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

std::string_view role_name(access_role role) {
  switch (role) {
    case access_role::reader: return "reader";
    case access_role::writer: return "writer";
    case access_role::owner: return "owner";
    case access_role::none: break;
  }
  return "none";
}

std::optional<access_role> parse_role(std::string_view name) {
  if (name == "reader") return access_role::reader;
  if (name == "writer") return access_role::writer;
  if (name == "owner") return access_role::owner;
  return std::nullopt;
}

bool is_grantee(std::string_view p) {
  return (has_prefix(p, "u_") || has_prefix(p, "a_") || has_prefix(p, "g_")) && id_tail(p.substr(2));
}

std::vector<std::string> group_directory::groups_of(const std::string& tenant, const std::string& principal) const {
  std::vector<std::string> out;
  auto t = groups.find(tenant);
  if (t == groups.end()) return out;
  for (const auto& [group, members] : t->second)
    if (members.count(principal)) out.push_back(group);
  return out;
}

bool group_directory::has_group(const std::string& tenant, const std::string& group) const {
  auto t = groups.find(tenant);
  return t != groups.end() && t->second.count(group) > 0;
}

std::variant<group_directory, std::string> parse_directory(std::string_view text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::string{"directory: not a JSON object"};
  const auto& o = v.as_object();
  for (const auto& m : o)
    if (m.key() != "version" && m.key() != "description" && m.key() != "groups")
      return "directory: unknown member " + std::string{m.key()};
  group_directory d;
  auto* version = o.if_contains("version");
  if (!version || !version->is_string() || version->as_string().empty())
    return std::string{"directory: version must be a non-empty string"};
  d.version = std::string{version->as_string()};
  auto* groups = o.if_contains("groups");
  if (!groups) return d;
  if (!groups->is_array()) return std::string{"directory: groups must be an array"};
  std::size_t index = 0;
  for (const auto& g : groups->as_array()) {
    auto where = "directory: groups[" + std::to_string(index++) + "]";
    if (!g.is_object()) return where + " must be an object";
    const auto& group = g.as_object();
    for (const auto& m : group)
      if (m.key() != "id" && m.key() != "tenant_id" && m.key() != "members" && m.key() != "description")
        return where + ": unknown member " + std::string{m.key()};
    auto* id = group.if_contains("id");
    auto* tenant = group.if_contains("tenant_id");
    auto* members = group.if_contains("members");
    if (!id || !id->is_string() || !has_prefix(id->as_string(), "g_") || !is_grantee(id->as_string()))
      return where + ".id must be a g_ id";
    if (!tenant || !tenant->is_string() || tenant->as_string().empty()) return where + ".tenant_id must be a string";
    if (!members || !members->is_array()) return where + ".members must be an array";
    auto& slot = d.groups[std::string{tenant->as_string()}];
    std::string name{id->as_string()};
    if (slot.count(name)) return where + ": group " + name + " is listed twice for its tenant";
    auto& set = slot[name];
    for (const auto& member : members->as_array()) {
      // Members are people and applications; groups do not nest (a check stays one lookup).
      if (!member.is_string() || has_prefix(member.as_string(), "g_") || !is_grantee(member.as_string()))
        return where + ".members must hold u_ and a_ principals only";
      set.insert(std::string{member.as_string()});
    }
  }
  return d;
}

std::string grant_json(const access_grant& g) {
  return "{\"resource_id\":" + json_string(g.resource_id) + ",\"principal\":" + json_string(g.principal)
         + ",\"role\":" + json_string(role_name(g.role)) + ",\"granted_by\":" + json_string(g.granted_by)
         + ",\"granted_at\":" + json_string(g.granted_at) + "}";
}

std::optional<access_grant> parse_grant(std::string_view text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto str = [&](const char* name) -> std::optional<std::string> {
    auto* m = o.if_contains(name);
    if (!m || !m->is_string()) return std::nullopt;
    return std::string{m->as_string()};
  };
  auto resource = str("resource_id"), principal = str("principal"), role = str("role"), by = str("granted_by"),
       at = str("granted_at");
  if (!resource || !principal || !role || !by || !at) return std::nullopt;
  auto parsed = parse_role(*role);
  if (!parsed) return std::nullopt;
  return access_grant{*resource, *principal, *parsed, *by, *at};
}

access_role effective_role(const std::vector<std::pair<std::string, access_role>>& grants, const std::string& subject,
                           const std::vector<std::string>& groups) {
  auto best = access_role::none;
  for (const auto& [principal, role] : grants) {
    bool mine = principal == subject || std::find(groups.begin(), groups.end(), principal) != groups.end();
    if (mine && role > best) best = role;
  }
  return best;
}

}  // namespace cl::domain
