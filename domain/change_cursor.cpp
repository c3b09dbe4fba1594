#include "domain/change_cursor.hpp"

#include "domain/base64url.hpp"
#include "domain/sealed_fields.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace cl::domain {

namespace {

constexpr char layout = '1';
constexpr std::size_t nonce_bytes = 12, tag_bytes = 16;

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

using cipher_ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

/// AES-256-GCM of `plain` under `key` and `nonce`: the ciphertext and its tag.
std::string encrypt(const std::string& key, const std::string& nonce, const std::string& plain) {
  cipher_ctx ctx{EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free};
  std::string out(plain.size() + tag_bytes, '\0');
  int len = 0, tail = 0;
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce_bytes), nullptr) != 1
      || EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.data()),
                            reinterpret_cast<const unsigned char*>(nonce.data())) != 1
      || EVP_EncryptUpdate(ctx.get(), o, &len, reinterpret_cast<const unsigned char*>(plain.data()),
                           static_cast<int>(plain.size())) != 1
      || EVP_EncryptFinal_ex(ctx.get(), o + len, &tail) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_bytes), o + plain.size()) != 1)
    throw std::runtime_error("feed cursor: encryption failed");
  return out;
}

/// The plaintext of `sealed` (ciphertext and tag), or nullopt when the tag does not verify.
std::optional<std::string> decrypt(const std::string& key, std::string_view nonce, std::string_view sealed) {
  if (sealed.size() < tag_bytes) return std::nullopt;
  auto n = sealed.size() - tag_bytes;
  cipher_ctx ctx{EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free};
  std::string out(n, '\0');
  std::string tag{sealed.substr(n)};
  int len = 0, tail = 0;
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce_bytes), nullptr) != 1
      || EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.data()),
                            reinterpret_cast<const unsigned char*>(nonce.data())) != 1
      || EVP_DecryptUpdate(ctx.get(), o, &len, reinterpret_cast<const unsigned char*>(sealed.data()), static_cast<int>(n)) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_bytes), tag.data()) != 1
      || EVP_DecryptFinal_ex(ctx.get(), o + len, &tail) != 1)
    return std::nullopt;
  return out;
}

}  // namespace

std::string feed_binding(std::vector<std::string> types) {
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  std::string out = "1;";
  for (const auto& t : types) out += t + ",";
  return out;
}

std::string feed_binding_any() {
  return "1;*";
}

feed_cursor_codec::feed_cursor_codec(std::string_view secret)
    : seal_key_(hmac(secret, "contentlake feed cursor 1")), id_key_(hmac(secret, "contentlake event id 1")) {
  if (secret.size() < 32) throw std::invalid_argument("the feed cursor secret must have at least 32 bytes");
}

std::string feed_cursor_codec::seal(const feed_position& p) const {
  std::string plain;
  put_field(plain, p.tenant);
  put_field(plain, p.binding);
  for (int shift = 56; shift >= 0; shift -= 8) plain.push_back(static_cast<char>((p.after >> shift) & 0xff));
  std::string nonce(nonce_bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce_bytes)) != 1)
    throw std::runtime_error("feed cursor: no random bytes");
  return base64url_encode(std::string(1, layout) + nonce + encrypt(seal_key_, nonce, plain));
}

std::optional<std::uint64_t> feed_cursor_codec::open(std::string_view cursor, std::string_view tenant,
                                                     std::string_view binding, cursor_problem* why) const {
  auto fail = [why](cursor_problem p) -> std::optional<std::uint64_t> {
    if (why) *why = p;
    return std::nullopt;
  };
  auto raw = cursor.size() > 4096 ? std::nullopt : base64url_decode(cursor);
  if (!raw || raw->size() < 1 + nonce_bytes + tag_bytes || (*raw)[0] != layout) return fail(cursor_problem::malformed);
  std::string_view bytes{*raw};
  auto plain = decrypt(seal_key_, bytes.substr(1, nonce_bytes), bytes.substr(1 + nonce_bytes));
  if (!plain) return fail(cursor_problem::malformed);
  std::string_view in{*plain};
  std::string sealed_tenant, sealed_binding;
  if (!get_field(in, sealed_tenant) || !get_field(in, sealed_binding) || in.size() != 8) return fail(cursor_problem::malformed);
  if (sealed_tenant != tenant || sealed_binding != binding) return fail(cursor_problem::mismatch);
  std::uint64_t after = 0;
  for (char c : in) after = (after << 8) | static_cast<unsigned char>(c);
  return after;
}

std::string feed_cursor_codec::event_id(std::string_view tenant, std::uint64_t seq) const {
  std::string data;
  put_field(data, tenant);
  for (int shift = 56; shift >= 0; shift -= 8) data.push_back(static_cast<char>((seq >> shift) & 0xff));
  return "evt_" + hex_encode(hmac(id_key_, data).substr(0, 12));
}

}  // namespace cl::domain
