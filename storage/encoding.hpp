#pragma once
/// Small binary encodings of the typed stores' values (storage-internal): big-endian integers and
/// length-prefixed text.

#include <cstdint>
#include <string>
#include <string_view>

namespace cl::storage::encoding {

inline void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// The big-endian number in the first 8 bytes of `in` (which must hold them).
inline std::uint64_t get_u64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  return v;
}

/// A 16-bit big-endian length, then the bytes.
inline void put_text(std::string& out, std::string_view s) {
  out.push_back(static_cast<char>((s.size() >> 8) & 0xff));
  out.push_back(static_cast<char>(s.size() & 0xff));
  out.append(s);
}

/// Reads what `put_text` wrote from the front of `in`, advancing it; false when `in` is short.
inline bool get_text(std::string_view& in, std::string& out) {
  if (in.size() < 2) return false;
  std::size_t n = (static_cast<unsigned char>(in[0]) << 8) | static_cast<unsigned char>(in[1]);
  if (in.size() < 2 + n) return false;
  out.assign(in.substr(2, n));
  in.remove_prefix(2 + n);
  return true;
}

}  // namespace cl::storage::encoding
