#include "storage/leases.hpp"

#include "domain/clock.hpp"

#include <spdlog/spdlog.h>

namespace cl::storage {

namespace {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

class memory_leases final : public lease_store {
public:
  bool claim(const std::string& name, const std::string& holder, std::chrono::milliseconds ttl) override {
    std::lock_guard lock{mutex_};
    auto now = domain::now_ms();
    auto& l = leases_[name];
    if (l.holder != holder && l.expires_ms > now) return false;
    l = {name, holder, now + ttl.count()};
    return true;
  }

  void release(const std::string& name, const std::string& holder) override {
    std::lock_guard lock{mutex_};
    if (auto it = leases_.find(name); it != leases_.end() && it->second.holder == holder) leases_.erase(it);
  }

  std::vector<lease_record> leases() override {
    std::lock_guard lock{mutex_};
    std::vector<lease_record> out;
    for (const auto& [name, l] : leases_) out.push_back(l);
    return out;
  }

private:
  std::mutex mutex_;
  std::map<std::string, lease_record> leases_;
};

}  // namespace

std::shared_ptr<lease_store> memory_lease_store() { return std::make_shared<memory_leases>(); }

std::vector<std::string> lease::all() { return {webhooks, edge_purge, pruning, upload_expiry}; }

lease_keeper::lease_keeper(std::shared_ptr<lease_store> store, std::string node, std::vector<std::string> names,
                           std::chrono::milliseconds ttl, bool own_thread)
  : store_(std::move(store)), node_(std::move(node)), ttl_(ttl) {
  for (auto& n : names) held_.emplace(std::move(n), std::make_unique<held>());
  renew();
  if (own_thread) thread_ = std::thread([this] { run(); });
}

lease_keeper::~lease_keeper() {
  stop();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t lease_keeper::term(std::string_view name) const {
  auto it = held_.find(name);
  if (it == held_.end()) return 0;
  auto term = it->second->term.load();
  return term != 0 && steady_ms() < it->second->until_ms.load() ? term : 0;
}

void lease_keeper::on_gain(std::function<void(const std::string&)> f) const {
  std::lock_guard lock{mutex_};
  gained_.push_back(std::move(f));
}

void lease_keeper::stop() {
  {
    std::lock_guard lock{mutex_};
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  std::lock_guard renewing{renewing_};  // a renewal under way (the service's keeper) ends first
  for (auto& [name, h] : held_) {
    if (h->term.exchange(0) == 0) continue;
    try {
      store_->release(name, node_);
    } catch (const std::exception& e) {
      spdlog::warn("lease {}: could not give it up ({}); another node takes it when it lapses", name, e.what());
    }
  }
}

void lease_keeper::renew() {
  std::lock_guard renewing{renewing_};
  {
    std::lock_guard lock{mutex_};
    if (stopping_) return;  // given up: a renewal now would take them again
  }
  // A claim counts from when it was sent: the store's time to live started no earlier.
  auto margin = std::max<std::int64_t>(ttl_.count() / 6, 1);
  for (auto& [name, h] : held_) {
    auto sent = steady_ms();
    bool ok = false;
    try {
      ok = store_->claim(name, node_, ttl_);
    } catch (const std::exception& e) {
      if (h->term.load() != 0 && steady_ms() >= h->until_ms.load())
        spdlog::warn("lease {}: could not be renewed ({}); this node stops its work", name, e.what());
      else if (h->term.load() != 0)
        spdlog::warn("lease {}: renewal failed ({}); held until it lapses", name, e.what());
      continue;  // held until `until_ms`, no longer
    }
    if (!ok) {
      if (h->term.exchange(0) != 0 && steady_ms() < h->until_ms.load())
        spdlog::warn("lease {}: taken by another node", name);
      continue;
    }
    // Held again after a lapse is a new hold: another node may have worked meanwhile.
    bool gained = h->term.load() == 0 || steady_ms() >= h->until_ms.load();
    h->until_ms = sent + ttl_.count() - margin;
    if (!gained) continue;
    h->term = ++terms_;
    spdlog::info("lease {}: held by this node ({})", name, node_);
    std::vector<std::function<void(const std::string&)>> callbacks;
    {
      std::lock_guard lock{mutex_};
      callbacks = gained_;
    }
    for (auto& f : callbacks) f(name);
  }
}

void lease_keeper::run() {
  std::unique_lock lock{mutex_};
  while (!wake_.wait_for(lock, renew_every(), [this] { return stopping_; })) {
    lock.unlock();
    renew();
    lock.lock();
  }
}

}  // namespace cl::storage
