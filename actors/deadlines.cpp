// Why one deadline per request (docs/architecture.md, "Request path"): a finite CAF `request` timeout registers
//
//   with CAF's clock thread and wakes it; with three or four asks per read that cost a quarter of a
//   request's CPU, and CAF keeps a timeout registered until it fires, answered or not. Coordinators
//   ask with `caf::infinite` and register the request once with `deadline_watch`
//   (`actors/deadlines.hpp`: a heap under a mutex, checked by one thread every tick, dropping
//   finished requests' entries whenever it has doubled). A passed deadline answers 503
//   `BACKEND_UNAVAILABLE` with `Retry-After: 1` and stops the coordinator; a dead callee is noticed
//   at once (`request_receiver_down`).

#include "actors/deadlines.hpp"

#include <algorithm>

namespace cl::actors {

deadline_watch::deadline_watch() = default;

deadline_watch::deadline_watch(std::chrono::milliseconds tick) {
  thread_ = std::thread{[this, tick] {
    std::unique_lock<std::mutex> lock{mutex_};
    while (!stopping_) {
      stop_cv_.wait_for(lock, tick, [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      expire_due(clock::now());
      lock.lock();
    }
  }};
}

deadline_watch::~deadline_watch() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (!thread_.joinable()) return;
  // The last owner may be a target expired by the watching thread itself.
  if (thread_.get_id() == std::this_thread::get_id())
    thread_.detach();
  else
    thread_.join();
}

void deadline_watch::watch(clock::time_point at, std::weak_ptr<deadline_target> target) {
  std::lock_guard<std::mutex> guard{mutex_};
  heap_.push_back(entry{at, std::move(target)});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<entry>{});
  if (heap_.size() < compact_at_) return;
  // Keep the entries of live targets only; the next compaction comes when the heap has doubled
  // again, so each entry is looked at a constant number of times on average.
  heap_.erase(std::remove_if(heap_.begin(), heap_.end(), [](const entry& e) { return e.target.expired(); }),
              heap_.end());
  std::make_heap(heap_.begin(), heap_.end(), std::greater<entry>{});
  compact_at_ = std::max(compact_floor, 2 * heap_.size());
}

std::size_t deadline_watch::expire_due(clock::time_point now) {
  std::vector<std::weak_ptr<deadline_target>> due;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    while (!heap_.empty() && heap_.front().at <= now) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<entry>{});
      due.push_back(std::move(heap_.back().target));
      heap_.pop_back();
    }
  }
  std::size_t expired = 0;
  for (auto& weak : due) {
    if (auto target = weak.lock()) {
      target->expire();
      ++expired;
    }
  }
  return expired;
}

std::size_t deadline_watch::pending() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return heap_.size();
}

}  // namespace cl::actors
