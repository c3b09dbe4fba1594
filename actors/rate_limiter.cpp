#include "actors/rate_limiter.hpp"
#include "actors/fault_hooks.hpp"

#include <caf/all.hpp>

#include <chrono>

namespace cl::actors {

namespace {

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::optional<std::string> validate(const rate_limiter_config& cfg) {
  if (cfg.requests_per_second <= 0) return std::string{"rate_limit.requests_per_second must be positive"};
  if (cfg.burst < 1) return std::string{"rate_limit.burst must be at least 1"};
  return std::nullopt;
}

rate_limiter_actor::behavior_type rate_limiter(rate_limiter_actor::stateful_pointer<rate_limiter_state> self,
                                               std::shared_ptr<const rate_limiter_config> cfg) {
  accept_fault_delays(self);
  return {
    [self, cfg](admit_atom, const std::string& client_id) {
      auto& st = self->state;
      auto now = monotonic_seconds();
      // Forget full buckets now and then: they carry no information, and clients come and go.
      if (++st.admissions % 4096 == 0)
        for (auto i = st.buckets.begin(); i != st.buckets.end();)
          i = i->second.full_at(now) ? st.buckets.erase(i) : std::next(i);
      auto it = st.buckets.find(client_id);
      if (it == st.buckets.end())
        it = st.buckets.emplace(client_id, domain::token_bucket{cfg->requests_per_second, cfg->burst, now}).first;
      int wait = it->second.take(now);
      if (wait > 0 && cfg->stats) cfg->stats->count_rate_limited();
      return rate_decision{wait == 0, wait};
    },
  };
}

}  // namespace cl::actors
