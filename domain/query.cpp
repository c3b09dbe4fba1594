#include "domain/query.hpp"

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

}  // namespace cl::domain
