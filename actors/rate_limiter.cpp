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

rate_sharing::rate_sharing(std::shared_ptr<storage::rate_exchange> exchange, std::chrono::milliseconds every)
  : exchange_(std::move(exchange)), every_(every), thread_([this] { run(); }) {}

rate_sharing::~rate_sharing() {
  {
    std::lock_guard lock{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
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
    storage::admissions mine(taken_.begin(), taken_.end());
    taken_.clear();
    lock.unlock();
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
    lock.lock();
    if (!others.empty()) {
      charges_.insert(charges_.end(), others.begin(), others.end());
      charged_.store(true, std::memory_order_release);
    }
  }
}

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
      auto bucket = [&](const std::string& client) -> domain::token_bucket& {
        auto it = st.buckets.find(client);
        if (it == st.buckets.end())
          it = st.buckets.emplace(client, domain::token_bucket{cfg->requests_per_second, cfg->burst, now}).first;
        return it->second;
      };
      // Forget full buckets now and then: they carry no information, and clients come and go.
      if (++st.admissions % 4096 == 0)
        for (auto i = st.buckets.begin(); i != st.buckets.end();)
          i = i->second.full_at(now) ? st.buckets.erase(i) : std::next(i);
      if (cfg->sharing)
        for (const auto& [client, taken] : cfg->sharing->charges()) bucket(client).charge(taken, now);
      int wait = bucket(client_id).take(now);
      if (wait > 0 && cfg->stats) cfg->stats->count_rate_limited();
      if (wait == 0 && cfg->sharing) cfg->sharing->took(client_id);
      return rate_decision{wait == 0, wait};
    },
  };
}

}  // namespace cl::actors
