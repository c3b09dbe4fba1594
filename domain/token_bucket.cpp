#include "domain/token_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace cl::domain {

token_bucket::token_bucket(double rate_per_second, double burst, double now)
  : rate_(rate_per_second), burst_(std::max(1.0, burst)), tokens_(burst_), last_(now) {}

void token_bucket::refill(double now) {
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + (now - last_) * rate_);
    last_ = now;
  }
}

int token_bucket::take(double now) {
  refill(now);
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return 0;
  }
  if (rate_ <= 0) return 3600;
  double wait = (1.0 - tokens_) / rate_;
  return std::max(1, static_cast<int>(std::ceil(wait)));
}

void token_bucket::charge(double tokens, double now) {
  refill(now);
  tokens_ = std::max(-burst_, tokens_ - std::max(0.0, tokens));
}

bool token_bucket::full_at(double now) const {
  return tokens_ + std::max(0.0, now - last_) * rate_ >= burst_;
}

}  // namespace cl::domain
