#pragma once
/// Delivery slots shared fairly between tenants (the webhook dispatcher's): at most `concurrency`
/// deliveries run at once, a tenant holds at most half of them and an endpoint its own cap (within
/// its tenant's half); a delivery waits in its tenant's queue, and a freed slot goes to the next
/// tenant in turn after the one served last (round robin), each tenant's oldest delivery whose
/// endpoint has room. So one tenant's endpoints that never answer hold half the slots, never all.
/// Pure bookkeeping: what a delivery is and how it runs is the caller's (`Item`).

#include <algorithm>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace cl::domain {

template <class Item>
class fair_share {
public:
  explicit fair_share(std::size_t concurrency) : concurrency_(std::max<std::size_t>(1, concurrency)) {}

  /// A tenant's share: half the slots (at least one).
  std::size_t tenant_cap() const { return std::max<std::size_t>(1, concurrency_ / 2); }

  /// An endpoint's share: an eighth of the slots or its `max_in_flight` and one (a retry beside its
  /// batch), whichever is more, within its tenant's share (at least one).
  std::size_t endpoint_cap(int max_in_flight) const {
    auto wanted = std::max<std::size_t>(concurrency_ / 8, static_cast<std::size_t>(std::max(1, max_in_flight)) + 1);
    return std::max<std::size_t>(1, std::min(wanted, tenant_cap()));
  }

  /// Queues a delivery to `endpoint` of `tenant`, which may have `cap` in flight.
  void enqueue(const std::string& tenant, const std::string& endpoint, std::size_t cap, Item item) {
    queued_[tenant].push_back({endpoint, cap, std::move(item)});
  }

  /// A delivery taken out of its queue into a slot.
  struct started {
    std::string tenant, endpoint;
    Item item;
  };

  /// The next delivery to start while a slot is free and a tenant under its share has one whose
  /// endpoint has room; it holds its slot until `finished`. nullopt: nothing can start now.
  std::optional<started> next() {
    if (in_flight_ >= concurrency_ || queued_.empty()) return std::nullopt;
    auto it = queued_.upper_bound(served_last_);
    for (std::size_t n = 0, all = queued_.size(); n < all; ++n, ++it) {
      if (it == queued_.end()) it = queued_.begin();
      auto& [tenant, list] = *it;
      if (count_in(tenant_in_flight_, tenant) >= tenant_cap()) continue;
      auto q = std::find_if(list.begin(), list.end(),
                            [&](const waiting& w) { return count_in(endpoint_in_flight_, w.endpoint) < w.cap; });
      if (q == list.end()) continue;
      started out{tenant, std::move(q->endpoint), std::move(q->item)};
      list.erase(q);
      served_last_ = tenant;
      if (list.empty()) queued_.erase(it);
      ++in_flight_;
      ++tenant_in_flight_[out.tenant];
      ++endpoint_in_flight_[out.endpoint];
      return out;
    }
    return std::nullopt;
  }

  /// A delivery `next` started ended: its slot is free.
  void finished(const std::string& tenant, const std::string& endpoint) {
    --in_flight_;
    if (--tenant_in_flight_[tenant] == 0) tenant_in_flight_.erase(tenant);
    if (--endpoint_in_flight_[endpoint] == 0) endpoint_in_flight_.erase(endpoint);
  }

  /// Whether `tenant` has as many deliveries running or queued as there are slots: the caller
  /// starts no more of its work (another tenant's goes on).
  bool full(const std::string& tenant) const {
    auto queued = queued_.find(tenant);
    return count_in(tenant_in_flight_, tenant) + (queued == queued_.end() ? 0 : queued->second.size()) >= concurrency_;
  }

  std::size_t in_flight() const { return in_flight_; }
  std::size_t in_flight(const std::string& tenant) const { return count_in(tenant_in_flight_, tenant); }

private:
  struct waiting {
    std::string endpoint;
    std::size_t cap = 1;
    Item item;
  };

  static std::size_t count_in(const std::map<std::string, std::size_t>& counts, const std::string& key) {
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }

  std::size_t concurrency_;
  std::size_t in_flight_ = 0;
  std::map<std::string, std::deque<waiting>> queued_;
  std::map<std::string, std::size_t> tenant_in_flight_, endpoint_in_flight_;
  std::string served_last_;  ///< the tenant the last slot went to
};

}  // namespace cl::domain
