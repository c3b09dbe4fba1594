#include "actors/token_cache.hpp"

#include "domain/sha256.hpp"

namespace cl::actors {

namespace {

std::string digest_of(std::string_view token) {
  auto digest = domain::sha256(token);
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
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
