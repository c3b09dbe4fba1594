#include "domain/ids.hpp"

#include <openssl/rand.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <stdexcept>

namespace cl::domain {

namespace {

/// `bytes` bytes of OpenSSL's CSPRNG, drawn 4 KiB at a time per thread: one RAND_bytes call costs
/// about as much as a few hundred bytes of its output, and every request takes an id.
std::string_view random_bytes(std::size_t bytes) {
  constexpr std::size_t pool_size = 4096;
  thread_local std::array<unsigned char, pool_size> pool{};
  thread_local std::size_t used = pool_size;
  if (bytes > pool_size) throw std::runtime_error("random source: too many bytes at once");
  if (pool_size - used < bytes) {
    if (RAND_bytes(pool.data(), static_cast<int>(pool_size)) != 1) throw std::runtime_error("random source unavailable");
    used = 0;
  }
  std::string_view out{reinterpret_cast<const char*>(pool.data() + used), bytes};
  used += bytes;
  return out;
}


}  // namespace

std::string random_base32(std::size_t bytes) {
  if (bytes > 32) throw std::runtime_error("random source: too many bytes at once");
  return base32_lower(random_bytes(bytes));
}

namespace {

std::string base32_with(std::string_view bytes, const char* alphabet) {
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

}  // namespace

std::string base32_lower(std::string_view bytes) {
  return base32_with(bytes, "abcdefghijklmnopqrstuvwxyz234567");
}

std::string base32hex_lower(std::string_view bytes) {
  return base32_with(bytes, "0123456789abcdefghijklmnopqrstuv");
}

std::string random_id(std::string_view prefix) {
  std::array<unsigned char, 18> buf{};
  auto ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::system_clock::now().time_since_epoch()).count());
  for (int i = 5; i >= 0; --i, ms >>= 8) buf[static_cast<std::size_t>(i)] = static_cast<unsigned char>(ms & 0xff);
  if (RAND_bytes(buf.data() + 6, 12) != 1) throw std::runtime_error("random source unavailable");
  std::string id{prefix};
  id += base32hex_lower(std::string_view{reinterpret_cast<const char*>(buf.data()), buf.size()});
  return id;
}

std::optional<std::int64_t> id_millis(std::string_view id, std::string_view prefix) {
  if (id.size() != prefix.size() + 29 || id.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::uint64_t bits = 0;  // the first 10 characters: 50 bits, the timestamp's 48 and 2 random
  for (std::size_t i = 0; i < id.size() - prefix.size(); ++i) {
    char c = id[prefix.size() + i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'v' ? c - 'a' + 10 : -1;
    if (v < 0) return std::nullopt;
    if (i < 10) bits = bits << 5 | static_cast<std::uint64_t>(v);
  }
  return static_cast<std::int64_t>(bits >> 2);
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
