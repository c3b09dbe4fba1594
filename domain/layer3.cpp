#include "domain/layer3.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace cl::domain {

namespace json = boost::json;

const std::vector<std::string_view>& content_derived_members() {
  static const std::vector<std::string_view> members = {"content", "entities", "snippet", "hash_content", "hash",
                                                          "lineage"};
  return members;
}

bool content_allowed(const resolved_rights& rights, const content_use& use) { return !check_content_use(rights, use); }

bool reveals_content(const field_mask* mask) {
  if (!mask) return true;
  const auto& derived = content_derived_members();
  return std::any_of(derived.begin(), derived.end(), [mask](std::string_view m) { return mask->names(m); });
}

std::optional<api_error> refuse_content(const resolved_rights& rights, const content_use& use, bool reveals) {
  if (!reveals) return std::nullopt;
  return check_content_use(rights, use);
}

std::string content_as_allowed(std::string representation, const resolved_rights& rights, const content_use& use) {
  if (!check_content_use(rights, use)) return representation;
  auto object = json::parse(representation).as_object();
  for (auto member : content_derived_members()) object.erase(member);
  return json::serialize(object);
}

}  // namespace cl::domain
