#pragma once
/// Leases: work that must run on one node of the cluster at a time (webhook delivery, edge purges,
/// pruning, the expiry of uploads) is done by the node holding its lease. A lease is held for a
/// time to live and renewed well before it lapses; a node that dies stops renewing, and another
/// takes the lease once it has lapsed. Times are the lease store's own clock (on PostgreSQL the
/// database's), so nodes' clocks need not agree.
///
/// On one node (LMDB) the store is in memory and the node holds every lease; on PostgreSQL the
/// leases are rows (storage/postgresql/leases.cpp).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cl::storage {

/// Who holds a lease, and until when (ms since the epoch, the store's clock).
struct lease_record {
  std::string name;
  std::string holder;
  std::int64_t expires_ms = 0;
};

/// Where leases are kept. Thread-safe; calls may throw when the store cannot be reached.
class lease_store {
public:
  virtual ~lease_store() = default;
  /// Takes `name` for `holder` until `ttl` from now when nobody holds it or its holder's time
  /// lapsed, or renews it when `holder` holds it. True when `holder` holds it after the call.
  virtual bool claim(const std::string& name, const std::string& holder, std::chrono::milliseconds ttl) = 0;
  /// Gives `name` up if `holder` holds it: another node may take it at once.
  virtual void release(const std::string& name, const std::string& holder) = 0;
  /// Every lease held or lapsed, by name.
  virtual std::vector<lease_record> leases() = 0;
};

/// Leases in this process's memory (one node).
std::shared_ptr<lease_store> memory_lease_store();

/// The names of the cluster's leases, and the work each covers.
namespace lease {
inline constexpr const char* webhooks = "webhooks";            ///< webhook delivery
inline constexpr const char* edge_purge = "edge-purge";        ///< purges of the edge caches
inline constexpr const char* pruning = "pruning";              ///< the ledger's and the change log's pruning
inline constexpr const char* upload_expiry = "upload-expiry";  ///< the sweep of abandoned uploads
/// Every lease a node keeps.
std::vector<std::string> all();
}  // namespace lease

/// Keeps this node's leases on a thread of its own: claims each every third of the time to live,
/// and counts a lease as held only until the time to live, less a margin, from when its last
/// successful claim was sent, so a node that cannot reach the store (or whose keeper is stuck)
/// stops working before another node can take over. Takeover after a holder dies: at most the
/// time to live plus a third of it.
class lease_keeper {
public:
  /// Starts keeping `names` for `node` (the first claims are made before it returns). `own_thread`:
  /// renews them on a thread of its own (tools, tests); false: someone calls `renew` every
  /// `renew_every()` (the service's supervised lease keeper, actors/ticker.hpp). A keeper nobody
  /// renews loses its leases when their time to live runs out.
  lease_keeper(std::shared_ptr<lease_store> store, std::string node, std::vector<std::string> names,
               std::chrono::milliseconds ttl, bool own_thread = true);
  /// Stops and gives up the leases held (`stop`).
  ~lease_keeper();
  lease_keeper(const lease_keeper&) = delete;
  lease_keeper& operator=(const lease_keeper&) = delete;

  /// One round: claims or renews every lease (a round trip each), tells `on_gain` of those taken.
  void renew();
  /// How often `renew` runs: a third of the time to live.
  std::chrono::milliseconds renew_every() const { return std::max(ttl_ / 3, std::chrono::milliseconds{1}); }

  /// Whether this node holds `name` now.
  bool holds(std::string_view name) const { return term(name) != 0; }
  /// 0 when this node does not hold `name`, else the number of the hold: it changes each time the
  /// node takes the lease again (work resumed after a gap starts afresh from the store).
  std::uint64_t term(std::string_view name) const;
  /// Calls `f(name)` on the keeper's thread each time this node takes a lease (also at the first
  /// claim, if made after this call). Register before the work starts.
  void on_gain(std::function<void(const std::string&)> f) const;
  /// Gives up every lease held and stops renewing (a draining node: the others take over at their
  /// next claim instead of waiting for the time to live). Idempotent.
  void stop();

  const std::string& node() const { return node_; }
  std::chrono::milliseconds ttl() const { return ttl_; }
  const std::shared_ptr<lease_store>& store() const { return store_; }

private:
  struct held {
    std::atomic<std::uint64_t> term{0};
    std::atomic<std::int64_t> until_ms{0};  ///< steady clock: held until then at most
  };
  void run();

  std::shared_ptr<lease_store> store_;
  std::string node_;
  std::chrono::milliseconds ttl_;
  std::map<std::string, std::unique_ptr<held>, std::less<>> held_;
  std::atomic<std::uint64_t> terms_{0};
  mutable std::mutex mutex_;
  std::mutex renewing_;  ///< held through a renewal: `stop` releases only after the one under way
  std::condition_variable wake_;
  bool stopping_ = false;
  mutable std::vector<std::function<void(const std::string&)>> gained_;
  std::thread thread_;
};

}  // namespace cl::storage
