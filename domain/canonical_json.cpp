#include "domain/canonical_json.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace cl::domain {

namespace json = boost::json;

json::value canonical_json(const json::value& v) {
  if (v.is_object()) {
    std::vector<std::pair<std::string, json::value>> members;
    for (const auto& m : v.as_object()) members.emplace_back(std::string{m.key()}, canonical_json(m.value()));
    std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    json::object out;
    for (auto& [k, value] : members) out.emplace(k, std::move(value));
    return out;
  }
  if (v.is_array()) {
    json::array out;
    for (const auto& item : v.as_array()) out.push_back(canonical_json(item));
    return out;
  }
  return v;
}

}  // namespace cl::domain
