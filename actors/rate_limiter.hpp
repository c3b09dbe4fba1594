#pragma once
/// The rate limiter actor: a token bucket per `client_id` (spec 8). On several nodes each node's
/// buckets are also charged what the other nodes admitted (`rate_sharing`).

#include "actors/interfaces.hpp"
#include "actors/metrics.hpp"
#include "actors/type_ids.hpp"
#include "domain/token_bucket.hpp"
#include "storage/rate_shares.hpp"

#include <caf/stateful_actor.hpp>

#include <array>
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
  /// `own_thread`: exchanges every `every` on a thread of its own (tests); false: someone calls
  /// `share` that often (the service's supervised `rate-sharing`, actors/ticker.hpp).
  rate_sharing(std::shared_ptr<storage::rate_exchange> exchange, std::chrono::milliseconds every,
               bool own_thread = true);
  ~rate_sharing();
  rate_sharing(const rate_sharing&) = delete;
  rate_sharing& operator=(const rate_sharing&) = delete;

  /// The limiter admitted one request of `client`.
  void took(const std::string& client);
  /// What the other nodes admitted since the last call, per client (empty at once when nothing came).
  storage::admissions charges();
  /// One exchange: this node's admissions since the last one out, the others' in (a round trip).
  void share();
  std::chrono::milliseconds every() const { return every_; }

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

/// Every client's token bucket, decided in place: by the coordinators (a request admits itself
/// without a message to the rate limiter actor) and by that actor (a header before its body is
/// read). Sharded by client; it outlives the actor, so a restart keeps every client's quota.
class rate_table {
public:
  rate_table(double requests_per_second, double burst, std::shared_ptr<metrics> stats,
             std::shared_ptr<rate_sharing> sharing);

  /// One request of `client_id`: admitted, or how long to wait.
  rate_decision admit(const std::string& client_id);
  /// Buckets held (a client is forgotten once its bucket is full again).
  std::size_t size() const;

private:
  struct shard {
    mutable std::mutex mutex;
    std::unordered_map<std::string, domain::token_bucket> buckets;
    std::size_t admissions = 0;
  };
  static constexpr std::size_t shard_count = 16;
  shard& of(const std::string& client);
  static domain::token_bucket& bucket(shard& s, const std::string& client, double rate, double burst, double now);

  double rate_, burst_;
  std::shared_ptr<metrics> stats_;
  std::shared_ptr<rate_sharing> sharing_;
  std::array<shard, shard_count> shards_;
};

struct rate_limiter_config {
  double requests_per_second = 200;
  double burst = 400;
  std::shared_ptr<metrics> stats;
  std::shared_ptr<rate_sharing> sharing;  ///< null on one node
  /// The buckets, shared with the coordinators (the service makes it from the fields above); when
  /// null, the actor makes a table of its own, which its restart does not keep.
  std::shared_ptr<rate_table> table;
};

/// Empty when `cfg` is usable, otherwise what is wrong with it.
std::optional<std::string> validate(const rate_limiter_config& cfg);

struct rate_limiter_state {
  static constexpr const char* name = "rate_limiter";
  std::shared_ptr<rate_table> table;  ///< the config's, or its own
};

/// The rate limiter's behavior.
rate_limiter_actor::behavior_type rate_limiter(rate_limiter_actor::stateful_pointer<rate_limiter_state> self,
                                               std::shared_ptr<const rate_limiter_config> cfg);

}  // namespace cl::actors
