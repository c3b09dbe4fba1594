#include "domain/json_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cl::domain {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t plain = 0;  // the start of the run of bytes appended as they are
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0xf]);
    }
  }
  out.append(s.data() + plain, s.size() - plain);
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
  out.reserve(s.size() + 2);
  append_json_string(out, s);
  return out;
}

}  // namespace cl::domain
