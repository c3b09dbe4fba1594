#include "http/event_loops.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <condition_variable>
#include <mutex>
#include <string>

namespace cl::http {

namespace {

/// struct sched_attr as the kernel's ABI has it (its first version, 48 bytes): glibc 2.36 has no
/// wrapper, and <linux/sched/types.h> clashes with <sched.h>.
struct sched_attr_v0 {
  std::uint32_t size = sizeof(sched_attr_v0);
  std::uint32_t policy = SCHED_OTHER;
  std::uint64_t flags = 0;
  std::int32_t nice = 0;
  std::uint32_t priority = 0;
  std::uint64_t runtime_ns = 0;  ///< for SCHED_OTHER since Linux 6.12: the thread's slice
  std::uint64_t deadline_ns = 0;
  std::uint64_t period_ns = 0;
};

/// Asks a slice for the calling thread, keeping its nice value; returns the slice the kernel
/// reports back in microseconds (0 where it keeps none per thread: it took the call and ignored it).
int ask_slice(int slice_us) {
  sched_attr_v0 now{};
  if (syscall(SYS_sched_getattr, 0, &now, sizeof now, 0) != 0) return 0;
  sched_attr_v0 want{};
  want.nice = now.nice;
  want.runtime_ns = static_cast<std::uint64_t>(slice_us) * 1000;
  if (syscall(SYS_sched_setattr, 0, &want, 0) != 0) return 0;
  sched_attr_v0 got{};
  if (syscall(SYS_sched_getattr, 0, &got, sizeof got, 0) != 0) return 0;
  return static_cast<int>(got.runtime_ns / 1000);
}

}  // namespace

event_loops::event_loops(int count, int slice_us) : asked_us_(slice_us) {
  for (int i = 0; i < count; ++i) {
    loops_.push_back(std::make_unique<boost::asio::io_context>(1));  // one thread: asio takes no lock
    held_.push_back(boost::asio::make_work_guard(*loops_.back()));
  }
}

event_loops::~event_loops() { finish(); }

std::vector<boost::asio::io_context*> event_loops::loops() const {
  std::vector<boost::asio::io_context*> out;
  for (const auto& l : loops_) out.push_back(l.get());
  return out;
}

void event_loops::start() {
  std::mutex m;
  std::condition_variable cv;
  std::size_t asked = 0;
  for (std::size_t i = 0; i < loops_.size(); ++i)
    threads_.emplace_back([&, i, loop = loops_[i].get()] {
      pthread_setname_np(pthread_self(), ("cl-http-" + std::to_string(i)).c_str());
      if (asked_us_ > 0) granted_us_.store(ask_slice(asked_us_));
      {
        std::lock_guard lock{m};  // notified under the lock: `start` may return as soon as it is free
        ++asked;
        cv.notify_one();
      }
      loop->run();
    });
  std::unique_lock lock{m};
  cv.wait(lock, [&] { return asked == loops_.size(); });
}

void event_loops::finish() {
  held_.clear();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace cl::http
