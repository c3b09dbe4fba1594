#pragma once
/// A token bucket: `rate` tokens per second refill up to `burst`; each request takes one.

namespace cl::domain {

/// Rate limiting state of one client. Time is seconds on any monotonic clock.
class token_bucket {
public:
  token_bucket(double rate_per_second, double burst, double now);

  /// Takes one token at `now`. Returns 0 when admitted, otherwise the whole seconds (at least 1)
  /// until a token will be available, for `Retry-After`.
  int take(double now);

  /// Takes `tokens` at `now` that were spent elsewhere (another node admitted them): the bucket
  /// may go into debt, down to minus its burst, and admits again once refilled past it.
  void charge(double tokens, double now);

  /// Seconds since this bucket was last touched; idle full buckets can be forgotten.
  double idle_for(double now) const { return now - last_; }

  /// True when the bucket would be full at `now`, i.e. forgetting it changes nothing.
  bool full_at(double now) const;

private:
  void refill(double now);

  double rate_;
  double burst_;
  double tokens_;
  double last_;
};

}  // namespace cl::domain
