#include "domain/page_token.hpp"
#include "domain/sealed_fields.hpp"

#include "domain/aead.hpp"
#include "domain/base64url.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace cl::domain {

namespace {

constexpr char version = '1';
constexpr std::size_t mac_bytes = 16;

api_error invalid(std::string message) {
  return api_error{error_id::page_token_invalid, std::move(message), {{"page_token", "not a token this service issued"}}};
}

}  // namespace

page_token_codec::page_token_codec(std::string secret) : secret_(std::move(secret)) {
  if (secret_.size() < 32) throw std::invalid_argument("page token secret must have at least 32 bytes");
}

std::string page_token_codec::mac(std::string_view data) const {
  return hmac_sha256(secret_, data).substr(0, mac_bytes);
}

std::string page_token_codec::issue(const page_cursor& cursor) const {
  std::string payload(1, version);
  put_field(payload, cursor.tenant);
  put_field(payload, cursor.query);
  put_field(payload, cursor.after);
  return base64url_encode(payload + mac(payload));
}

std::variant<std::string, api_error> page_token_codec::open(std::string_view token, std::string_view tenant,
                                                            std::string_view query) const {
  if (token.size() > 4096) return invalid("The page_token is too long.");
  auto raw = base64url_decode(token);
  if (!raw || raw->size() < 1 + mac_bytes) return invalid("The page_token is malformed.");
  std::string_view payload{raw->data(), raw->size() - mac_bytes};
  auto expected = mac(payload);
  if (CRYPTO_memcmp(expected.data(), raw->data() + payload.size(), mac_bytes) != 0)
    return invalid("The page_token was altered.");
  if (payload.front() != version) return invalid("The page_token has an unknown version.");
  payload.remove_prefix(1);
  page_cursor c;
  if (!get_field(payload, c.tenant) || !get_field(payload, c.query) || !get_field(payload, c.after) || !payload.empty())
    return invalid("The page_token is malformed.");
  if (c.tenant != tenant)
    return api_error{error_id::page_token_mismatch, "The page_token belongs to another tenant.",
                     {{"page_token", "issued for another tenant"}}};
  if (c.query != query)
    return api_error{error_id::page_token_mismatch, "The page_token was issued for other filters.",
                     {{"page_token", "issued for another query; keep the filters of the first page"}}};
  return std::move(c.after);
}

std::string canonical_query(std::vector<std::pair<std::string, std::string>> filters) {
  std::sort(filters.begin(), filters.end());
  std::string out;
  for (const auto& [k, v] : filters) {
    if (!out.empty()) out.push_back('&');
    out += k + "=" + v;
  }
  return out;
}

std::variant<std::size_t, api_error> page_size_from(std::string_view raw) {
  if (raw.empty()) return std::size_t{50};
  // Digits only (no sign, no space): any run of them is a size, however long. One too large for
  // an integer is capped like any value above 1000, not refused.
  bool digits = std::all_of(raw.begin(), raw.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    return api_error{error_id::invalid_argument, "page_size must be a non-negative integer.",
                     {{"page_size", "a non-negative integer; 0 or absent means 50, at most 1000"}}};
  unsigned long long v = 0;
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec == std::errc::result_out_of_range) return std::size_t{1000};
  if (v == 0) return std::size_t{50};
  return static_cast<std::size_t>(std::min<unsigned long long>(v, 1000));
}

}  // namespace cl::domain
