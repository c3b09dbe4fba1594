#include "domain/sha256.hpp"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

namespace cl::domain {

sha256_digest sha256(std::string_view bytes) {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);  // kept for the process's life
  thread_local std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  sha256_digest out{};
  unsigned int n = 0;
  if (!md || !ctx || EVP_DigestInit_ex2(ctx.get(), md, nullptr) != 1
      || EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1 || EVP_DigestFinal_ex(ctx.get(), out.data(), &n) != 1
      || n != out.size())
    throw std::runtime_error("SHA-256 unavailable");
  return out;
}

}  // namespace cl::domain
