#include "domain/ids.hpp"

#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace cl::domain {

namespace {

std::string random_base32(std::size_t bytes) {
  std::array<unsigned char, 32> buf{};
  if (bytes > buf.size() || RAND_bytes(buf.data(), static_cast<int>(bytes)) != 1)
    throw std::runtime_error("random source unavailable");
  return base32_lower(std::string_view{reinterpret_cast<const char*>(buf.data()), bytes});
}

}  // namespace

std::string base32_lower(std::string_view bytes) {
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  unsigned acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out.push_back(alphabet[(acc >> bits) & 31]);
    }
  }
  if (bits > 0) out.push_back(alphabet[(acc << (5 - bits)) & 31]);
  return out;
}

std::string random_id(std::string_view prefix) {
  std::string id{prefix};
  id += random_base32(16);
  return id;
}

std::string new_request_id() {
  return "req_" + random_base32(10);
}

bool is_valid_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
              || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace cl::domain
