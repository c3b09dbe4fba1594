#pragma once
/// The rate limiter actor: a token bucket per `client_id` (spec 8).

#include "actors/interfaces.hpp"
#include "actors/metrics.hpp"
#include "domain/token_bucket.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace cl::actors {

struct rate_limiter_config {
  double requests_per_second = 200;
  double burst = 400;
  std::shared_ptr<metrics> stats;
};

/// Empty when `cfg` is usable, otherwise what is wrong with it.
std::optional<std::string> validate(const rate_limiter_config& cfg);

struct rate_limiter_state {
  static constexpr const char* name = "rate_limiter";
  std::unordered_map<std::string, domain::token_bucket> buckets;
  std::size_t admissions = 0;
};

/// The rate limiter's behavior.
rate_limiter_actor::behavior_type rate_limiter(rate_limiter_actor::stateful_pointer<rate_limiter_state> self,
                                               std::shared_ptr<const rate_limiter_config> cfg);

}  // namespace cl::actors
