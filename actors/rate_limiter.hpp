#pragma once
/// The rate limiter actor: a token bucket per `client_id` (spec 8). On several nodes each node's
/// buckets are also charged what the other nodes admitted (`rate_sharing`).

#include "actors/interfaces.hpp"
#include "actors/metrics.hpp"
#include "domain/token_bucket.hpp"
#include "storage/rate_shares.hpp"

#include <caf/stateful_actor.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

namespace cl::actors {

/// What this node's limiter shares with the other nodes' limiters: every `every`, a thread of its
/// own adds what the limiter admitted since to the shared tally and collects what the others
/// admitted, which the limiter charges to its buckets at its next admission. A client bursting
/// through N nodes is admitted at most its quota plus what the other nodes admitted within one
/// interval before this node was charged (docs/operations.md states the bound).
class rate_sharing {
public:
  rate_sharing(std::shared_ptr<storage::rate_exchange> exchange, std::chrono::milliseconds every);
  ~rate_sharing();
  rate_sharing(const rate_sharing&) = delete;
  rate_sharing& operator=(const rate_sharing&) = delete;

  /// The limiter admitted one request of `client`.
  void took(const std::string& client);
  /// What the other nodes admitted since the last call, per client (empty at once when nothing came).
  storage::admissions charges();

private:
  void run();

  std::shared_ptr<storage::rate_exchange> exchange_;
  std::chrono::milliseconds every_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::unordered_map<std::string, double> taken_;
  storage::admissions charges_;
  std::atomic<bool> charged_{false};
  bool failing_ = false;
  std::thread thread_;
};

struct rate_limiter_config {
  double requests_per_second = 200;
  double burst = 400;
  std::shared_ptr<metrics> stats;
  std::shared_ptr<rate_sharing> sharing;  ///< null on one node
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
