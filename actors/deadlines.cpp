#include "actors/deadlines.hpp"

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
  heap_.push(entry{at, std::move(target)});
}

std::size_t deadline_watch::expire_due(clock::time_point now) {
  std::vector<std::weak_ptr<deadline_target>> due;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    while (!heap_.empty() && heap_.top().at <= now) {
      due.push_back(heap_.top().target);
      heap_.pop();
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
