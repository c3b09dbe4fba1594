#include "domain/json_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cl::domain {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xf]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

std::string json_decimal(double v, int places) {
  if (!std::isfinite(v)) return "0";
  char buffer[64];
  // Beyond 1e20 a fixed rendering stops being short; no score or measure here comes near it.
  int n = std::snprintf(buffer, sizeof buffer, "%.*f", places, std::clamp(v, -1e20, 1e20));
  std::string out{buffer, static_cast<std::size_t>(std::max(n, 0))};
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  if (out == "-0") out = "0";
  return out;
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

}  // namespace cl::domain
