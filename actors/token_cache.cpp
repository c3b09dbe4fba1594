#include "actors/token_cache.hpp"

#include <openssl/sha.h>

namespace cl::actors {

namespace {

std::string digest_of(std::string_view token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

}  // namespace

std::optional<domain::principal> token_cache::find(std::string_view token, std::int64_t now) const {
  return cache_.find(digest_of(token), now);
}

void token_cache::insert(std::string_view token, const domain::principal& who, std::int64_t valid_until,
                         std::int64_t now) {
  cache_.insert(digest_of(token), who, valid_until, now);
}

}  // namespace cl::actors
