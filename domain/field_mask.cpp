#include "domain/field_mask.hpp"

#include <boost/json.hpp>

namespace cl::domain {

namespace json = boost::json;

namespace {

field_schema leaf() {
  return {};
}

field_schema node(std::initializer_list<std::pair<const std::string, field_schema>> kids) {
  field_schema s;
  s.children = std::map<std::string, field_schema, std::less<>>(kids);
  return s;
}

field_schema open_node() {
  field_schema s;
  s.open = true;
  return s;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto end = text.find(sep, start);
    out.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

bool known(const field_schema& schema, const std::vector<std::string>& path) {
  const field_schema* at = &schema;
  for (const auto& seg : path) {
    if (seg.empty()) return false;
    if (at->open) return true;
    auto it = at->children.find(seg);
    if (it == at->children.end()) return false;
    at = &it->second;
  }
  return true;
}

/// Copies the part of `src` under `path[i..]` into `dst` (which mirrors src's shape).
void select(const json::value& src, const std::vector<std::string>& path, std::size_t i, json::value& dst) {
  if (i == path.size()) {
    dst = src;
    return;
  }
  if (src.is_object()) {
    auto* child = src.as_object().if_contains(path[i]);
    if (!child) {
      if (dst.is_null()) dst = json::object{};  // an array element without the field stays an object
      return;
    }
    if (!dst.is_object()) dst = json::object{};
    auto& slot = dst.as_object()[path[i]];
    select(*child, path, i + 1, slot);
    if (slot.is_null() && !child->is_null()) dst.as_object().erase(path[i]);
  } else if (src.is_array()) {
    const auto& in = src.as_array();
    if (!dst.is_array()) dst = json::array(in.size());
    auto& out = dst.as_array();
    for (std::size_t k = 0; k < in.size(); ++k) select(in[k], path, i, out[k]);
  }
}


field_schema rights_node() {
  return node({{"usable", leaf()},
               {"contracts", node({{"id", leaf()}, {"status", leaf()}, {"version", leaf()}})},
               {"territorial_rights", node({{"worldwide", leaf()}, {"territory_codes", leaf()}, {"status", leaf()}})},
               {"manifestation_rights", node({{"manifestation_type", leaf()}, {"status", leaf()}})},
               {"usage_terms", node({{"usage_type", leaf()}, {"status", leaf()}, {"method", leaf()}, {"exception", leaf()}})},
               {"handling_terms", node({{"handling_type", leaf()}, {"status", leaf()}})},
               {"resolved_at", leaf()},
               {"policy_version", leaf()},
               {"basis", node({{"contract_id", leaf()}, {"contract_version", leaf()}})},
               {"commercial_terms", open_node()},
               {"odrl", leaf()}});
}

}  // namespace

const field_schema& search_hit_fields() {
  static const field_schema schema = [] {
    auto rights = rights_node();
    rights.children.erase("commercial_terms");  // stitched into single Resource reads only
    return node({{"id", leaf()}, {"title", leaf()}, {"type", leaf()}, {"language", leaf()}, {"work_id", leaf()},
                 {"score", leaf()}, {"snippet", leaf()}, {"rights", rights}});
  }();
  return schema;
}

const field_schema& resource_fields() {
  static const field_schema schema = node({
    {"id", leaf()},
    {"work_id", leaf()},
    {"version", leaf()},
    {"title", leaf()},
    {"uri", leaf()},
    {"type", leaf()},
    {"language", leaf()},
    {"content", open_node()},
    {"rights", rights_node()},
    {"source", node({{"id", leaf()}, {"name", leaf()}, {"origin_type", leaf()}, {"system", leaf()}})},
    {"provenance", open_node()},
    {"work", open_node()},
    {"lineage", open_node()},
    {"entities", open_node()},
    {"hash", leaf()},
    {"hash_content", leaf()},
    {"update_token", leaf()},
    {"created", leaf()},
    {"updated", leaf()},
  });
  return schema;
}

bool field_mask::names(std::string_view top) const {
  return all || names_explicitly(top);
}

bool field_mask::names_explicitly(std::string_view top) const {
  for (const auto& p : paths)
    if (!p.empty() && p.front() == top) return true;
  return false;
}

bool field_mask::names_member(std::string_view top, std::string_view member) const {
  for (const auto& p : paths)
    if (p.size() >= 2 && p[0] == top && p[1] == member) return true;
  return false;
}

std::variant<field_mask, api_error> parse_field_mask(std::string_view text, const field_schema& schema) {
  field_mask mask;
  api_error err{error_id::invalid_argument, "The field mask names unknown fields.", {}};
  for (auto& item : split(text, ',')) {
    auto start = item.find_first_not_of(' ');
    auto end = item.find_last_not_of(' ');
    std::string trimmed = start == std::string::npos ? std::string{} : item.substr(start, end - start + 1);
    if (trimmed == "*") {
      mask.all = true;
      continue;
    }
    auto path = split(trimmed, '.');
    if (!known(schema, path)) {
      err.details.push_back({"fields", "unknown field \"" + trimmed.substr(0, 128) + "\""});
      continue;
    }
    mask.paths.push_back(std::move(path));
  }
  if (!err.details.empty()) return err;
  return mask;
}

json::object apply_field_mask(const json::object& full, const field_mask& mask) {
  if (mask.all) return full;
  json::value out = json::object{};
  for (const auto& path : mask.paths) select(full, path, 0, out);
  return std::move(out.as_object());
}

json::object apply_resource_mask(const json::object& full, const field_mask& mask) {
  auto out = apply_field_mask(full, mask);
  const auto* rights = full.if_contains("rights");
  if (mask.all || !rights || !rights->is_object()) return out;
  auto* shown = out.if_contains("rights");
  if (!shown || !shown->is_object()) {
    out["rights"] = *rights;
  } else if (const auto* usable = rights->as_object().if_contains("usable")) {
    shown->as_object()["usable"] = *usable;
  }
  return out;
}

std::string serialize_with_policy(json::object masked, std::string_view policy) {
  auto* rights = masked.if_contains("rights");
  if (!rights || !rights->is_object() || !rights->as_object().contains("odrl")) return json::serialize(masked);
  auto shown = std::move(rights->as_object());
  masked.erase("rights");
  shown.erase("odrl");
  // `{<masked members>,"rights":{<rights members>,"odrl":<policy>}}`, written once.
  auto head = json::serialize(masked), inner = json::serialize(shown);
  std::string out;
  out.reserve(head.size() + inner.size() + policy.size() + 24);
  out.append(head, 0, head.size() - 1);
  if (head.size() > 2) out += ',';
  out += "\"rights\":";
  out.append(inner, 0, inner.size() - 1);
  if (inner.size() > 2) out += ',';
  out += "\"odrl\":";
  out += policy;
  out += "}}";
  return out;
}

}  // namespace cl::domain
