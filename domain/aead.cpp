#include "domain/aead.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>

namespace cl::domain {

namespace {

constexpr std::size_t nonce_bytes = 12, tag_bytes = 16;
static_assert(aead_overhead == nonce_bytes + tag_bytes);

using cipher_ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), bytes(data), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("no random bytes");
  return out;
}

std::string aead_seal(std::string_view key, std::string_view plain) {
  if (key.size() != 32) throw std::invalid_argument("an AES-256 key has 32 bytes");
  auto nonce = random_bytes(nonce_bytes);
  cipher_ctx ctx{EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free};
  std::string out = nonce + std::string(plain.size() + tag_bytes, '\0');
  int len = 0, tail = 0;
  auto* o = reinterpret_cast<unsigned char*>(out.data()) + nonce_bytes;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce_bytes), nullptr) != 1
      || EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key), bytes(nonce)) != 1
      || EVP_EncryptUpdate(ctx.get(), o, &len, bytes(plain), static_cast<int>(plain.size())) != 1
      || EVP_EncryptFinal_ex(ctx.get(), o + len, &tail) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_bytes), o + plain.size()) != 1)
    throw std::runtime_error("encryption failed");
  return out;
}

std::optional<std::string> aead_open(std::string_view key, std::string_view sealed) {
  if (key.size() != 32 || sealed.size() < nonce_bytes + tag_bytes) return std::nullopt;
  auto nonce = sealed.substr(0, nonce_bytes);
  auto n = sealed.size() - nonce_bytes - tag_bytes;
  auto cipher = sealed.substr(nonce_bytes, n);
  std::string tag{sealed.substr(nonce_bytes + n)};
  cipher_ctx ctx{EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free};
  std::string out(n, '\0');
  int len = 0, tail = 0;
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce_bytes), nullptr) != 1
      || EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key), bytes(nonce)) != 1
      || EVP_DecryptUpdate(ctx.get(), o, &len, bytes(cipher), static_cast<int>(n)) != 1
      || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_bytes), tag.data()) != 1
      || EVP_DecryptFinal_ex(ctx.get(), o + len, &tail) != 1)
    return std::nullopt;
  return out;
}

}  // namespace cl::domain
