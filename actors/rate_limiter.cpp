#include "actors/rate_limiter.hpp"
#include "actors/fault_hooks.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace cl::actors {

namespace {

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

rate_sharing::rate_sharing(std::shared_ptr<storage::rate_exchange> exchange, std::chrono::milliseconds every,
                           bool own_thread)
  : exchange_(std::move(exchange)), every_(every) {
  if (own_thread) thread_ = std::thread([this] { run(); });
}

rate_sharing::~rate_sharing() {
  {
    std::lock_guard lock{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void rate_sharing::took(const std::string& client) {
  std::lock_guard lock{mutex_};
  taken_[client] += 1;
}

storage::admissions rate_sharing::charges() {
  if (!charged_.load(std::memory_order_acquire)) return {};
  std::lock_guard lock{mutex_};
  charged_ = false;
  return std::exchange(charges_, {});
}

void rate_sharing::run() {
  std::unique_lock lock{mutex_};
  while (!wake_.wait_for(lock, every_, [this] { return stopping_; })) {
    lock.unlock();
    share();
    lock.lock();
  }
}

void rate_sharing::share() {
  storage::admissions mine;
  {
    std::lock_guard lock{mutex_};
    mine.assign(taken_.begin(), taken_.end());
    taken_.clear();
  }
  storage::admissions others;
  try {
    others = exchange_->exchange(mine);
    if (failing_) spdlog::info("rate limit: sharing with the other nodes again");
    failing_ = false;
  } catch (const std::exception& e) {
    // The interval's admissions are not shared: each node limits on its own meanwhile.
    if (!failing_) spdlog::warn("rate limit: cannot share with the other nodes ({}); each limits alone", e.what());
    failing_ = true;
  }
  if (others.empty()) return;
  std::lock_guard lock{mutex_};
  charges_.insert(charges_.end(), others.begin(), others.end());
  charged_.store(true, std::memory_order_release);
}

std::optional<std::string> validate(const rate_limiter_config& cfg) {
  if (cfg.requests_per_second <= 0) return std::string{"rate_limit.requests_per_second must be positive"};
  if (cfg.burst < 1) return std::string{"rate_limit.burst must be at least 1"};
  return std::nullopt;
}

rate_table::rate_table(double requests_per_second, double burst, std::shared_ptr<metrics> stats,
                       std::shared_ptr<rate_sharing> sharing)
  : rate_(requests_per_second), burst_(burst), stats_(std::move(stats)), sharing_(std::move(sharing)) {}

rate_table::shard& rate_table::of(const std::string& client) {
  return shards_[std::hash<std::string>{}(client) % shard_count];
}

domain::token_bucket& rate_table::bucket(shard& s, const std::string& client, double rate, double burst, double now) {
  auto it = s.buckets.find(client);
  if (it == s.buckets.end()) it = s.buckets.emplace(client, domain::token_bucket{rate, burst, now}).first;
  return it->second;
}

rate_decision rate_table::admit(const std::string& client_id) {
  auto now = monotonic_seconds();
  // What the other nodes admitted since: charged to the buckets first (empty at once when nothing came).
  if (sharing_)
    for (const auto& [client, taken] : sharing_->charges()) {
      auto& s = of(client);
      std::lock_guard<std::mutex> guard{s.mutex};
      bucket(s, client, rate_, burst_, now).charge(taken, now);
    }
  int wait = 0;
  {
    auto& s = of(client_id);
    std::lock_guard<std::mutex> guard{s.mutex};
    // Forget full buckets now and then: they carry no information, and clients come and go.
    if (++s.admissions % 4096 == 0)
      for (auto i = s.buckets.begin(); i != s.buckets.end();)
        i = i->second.full_at(now) ? s.buckets.erase(i) : std::next(i);
    wait = bucket(s, client_id, rate_, burst_, now).take(now);
  }
  if (wait > 0 && stats_) stats_->count_rate_limited();
  if (wait == 0 && sharing_) sharing_->took(client_id);
  return rate_decision{wait == 0, wait};
}

std::size_t rate_table::size() const {
  std::size_t n = 0;
  for (const auto& s : shards_) {
    std::lock_guard<std::mutex> guard{s.mutex};
    n += s.buckets.size();
  }
  return n;
}

rate_limiter_actor::behavior_type rate_limiter(rate_limiter_actor::stateful_pointer<rate_limiter_state> self,
                                               std::shared_ptr<const rate_limiter_config> cfg) {
  accept_fault_delays(self);
  self->state.table =
    cfg->table ? cfg->table : std::make_shared<rate_table>(cfg->requests_per_second, cfg->burst, cfg->stats, cfg->sharing);
  return {
    [self](admit_atom, const std::string& client_id) { return self->state.table->admit(client_id); },
  };
}

}  // namespace cl::actors
