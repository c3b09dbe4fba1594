#include "actors/work_lane.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

namespace cl::actors {

namespace {

/// The lanes' thread ids: `lower_other_threads` passes over them.
std::mutex lanes_mutex;
std::set<int> lane_tids;

int this_tid() { return static_cast<int>(::gettid()); }

}  // namespace

struct work_lane::impl {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
  int tid = 0;
  std::thread thread;

  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock{mutex};
        wake.wait(lock, [this] { return stopping || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      job();  // packaged tasks keep their exceptions for the waiting caller
    }
  }
};

work_lane::work_lane(const std::string& name) : impl_(std::make_unique<impl>()) {
  std::promise<int> started;
  auto tid = started.get_future();
  impl_->thread = std::thread([this, name, &started] {
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    {
      std::lock_guard lock{lanes_mutex};
      lane_tids.insert(this_tid());
    }
    started.set_value(this_tid());
    impl_->loop();
  });
  impl_->tid = tid.get();
}

work_lane::~work_lane() {
  {
    std::lock_guard lock{impl_->mutex};
    impl_->stopping = true;
  }
  impl_->wake.notify_one();
  impl_->thread.join();
  std::lock_guard lock{lanes_mutex};
  lane_tids.erase(impl_->tid);
}

int work_lane::tid() const { return impl_->tid; }

void work_lane::post(std::function<void()> job) {
  {
    std::lock_guard lock{impl_->mutex};
    impl_->jobs.push_back(std::move(job));
  }
  impl_->wake.notify_one();
}

std::size_t lower_other_threads(int steps) {
  static const int base = ::getpriority(PRIO_PROCESS, static_cast<id_t>(this_tid()));
  int target = std::min(19, base + std::max(0, steps));
  std::size_t lowered = 0;
  for (bool changed = true; changed;) {
    changed = false;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
      int tid = 0;
      try {
        tid = std::stoi(entry.path().filename().string());
      } catch (const std::exception&) {
        continue;
      }
      {
        std::lock_guard lock{lanes_mutex};
        if (lane_tids.count(tid)) continue;
      }
      errno = 0;
      int now = ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
      if (errno != 0 || now >= target) continue;  // gone meanwhile, or already as low
      if (::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), target) != 0) {
        if (errno == ESRCH) continue;  // ended meanwhile
        spdlog::warn("thread priority: could not lower thread {}: {}", tid, std::strerror(errno));
        continue;
      }
      ++lowered;
      changed = true;
    }
  }
  return lowered;
}

}  // namespace cl::actors
