#pragma once
/// The field layout of the tokens the service seals or signs (page tokens, change feed cursors):
/// each field as a 4-byte big-endian length, then its bytes.

#include <cstdint>
#include <string>
#include <string_view>

namespace cl::domain {

inline void put_field(std::string& out, std::string_view field) {
  auto n = static_cast<std::uint32_t>(field.size());
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(field);
}

/// Reads what `put_field` wrote from the front of `in`, advancing it; false when `in` is short.
inline bool get_field(std::string_view& in, std::string& field) {
  if (in.size() < 4) return false;
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned char>(in[i]);
  in.remove_prefix(4);
  if (in.size() < n) return false;
  field.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

}  // namespace cl::domain
