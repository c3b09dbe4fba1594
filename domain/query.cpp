#include "domain/query.hpp"
#include "domain/text.hpp"

#include <algorithm>
#include <set>

namespace cl::domain {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decode_query_component(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '+') {
      out.push_back(' ');
    } else if (raw[i] == '%' && i + 2 < raw.size() && hex_digit(raw[i + 1]) >= 0 && hex_digit(raw[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_digit(raw[i + 1]) * 16 + hex_digit(raw[i + 2])));
      i += 2;
    } else {
      out.push_back(raw[i]);
    }
  }
  return out;
}

std::optional<std::string> repeated_parameter(std::string_view query) {
  std::set<std::string, std::less<>> seen;
  std::size_t start = 0;
  while (start < query.size()) {
    auto end = query.find('&', start);
    auto pair = query.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!pair.empty()) {
      auto name = decode_query_component(pair.substr(0, pair.find('=')));
      if (!seen.insert(name).second) return name;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<unusable_parameter> first_unusable_parameter(std::string_view query) {
  std::size_t start = 0;
  while (start < query.size()) {
    auto end = query.find('&', start);
    auto pair = query.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    auto eq = pair.find('=');
    auto name = decode_query_component(pair.substr(0, eq));
    auto value = eq == std::string_view::npos ? std::string{} : decode_query_component(pair.substr(eq + 1));
    auto name_problem = text_problem(name);
    auto value_problem = text_problem(value);
    if (name_problem || value_problem) {
      std::size_t shown = 0;  // the longest prefix of whole, usable characters, at most 64 bytes
      for (std::size_t i = 1; i <= std::min<std::size_t>(name.size(), 64); ++i)
        if (!text_problem(std::string_view{name}.substr(0, i))) shown = i;
      name.resize(shown);
      return unusable_parameter{std::move(name), std::string{name_problem ? "its name " : ""}
                                                   + std::string{name_problem ? *name_problem : *value_problem}};
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace cl::domain
