#pragma once
/// Verified tokens, shared between the auth actor (the only writer) and coordinators (readers).
///
/// A request with a token seen before goes straight to the rate limiter and its plan. The auth
/// actor stays the only place that verifies signatures and decides what is trusted: it inserts
/// after a successful verification and clears everything when the key set changes (a key that
/// left the set must not keep its tokens alive). Keys are SHA-256 digests, so the cache never
/// holds a usable token.

#include "actors/shared_cache.hpp"
#include "domain/principal.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace cl::actors {

class token_cache {
public:
  /// Holds at most about `capacity` tokens; 0 disables caching.
  explicit token_cache(std::size_t capacity) : cache_(capacity) {}

  /// The principal of `token` if it was verified and `now < valid_until` (Unix seconds).
  std::optional<domain::principal> find(std::string_view token, std::int64_t now) const;

  /// Remembers a verified token until `valid_until` (Unix seconds: `exp` plus the clock skew).
  void insert(std::string_view token, const domain::principal& who, std::int64_t valid_until, std::int64_t now);

  void clear() { cache_.clear(); }
  std::size_t size() const { return cache_.size(); }

private:
  shared_cache<domain::principal> cache_;
};

}  // namespace cl::actors
