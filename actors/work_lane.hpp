#pragma once
/// CPU priority between the service's own threads. When the CPU is short, Linux shares it among
/// runnable threads by their nice value; with equal values a thread that must keep up with the
/// others' output (the search indexer, behind a write burst) gets one share among many and falls
/// behind. A `work_lane` is a thread that keeps the priority of the thread that created it; once
/// every lane exists, `lower_other_threads` runs every other thread of the process some steps
/// lower. An unprivileged process can lower a thread's priority but never raise it back, so lanes
/// come first, and threads created later inherit their creator's value: a lane's helpers stay up,
/// everything else (scheduler workers, detached actors a supervisor restarts, I/O threads) stays
/// down. Nice only matters while the CPU is contended; an idle lane costs nothing.

#include <functional>
#include <future>
#include <memory>
#include <string>

namespace cl::actors {

class work_lane {
public:
  /// Starts the lane's thread, named `name` (Linux shows 15 characters).
  explicit work_lane(const std::string& name);
  /// Runs what was posted, then joins the thread.
  ~work_lane();
  work_lane(const work_lane&) = delete;
  work_lane& operator=(const work_lane&) = delete;

  /// Runs `work` on the lane's thread after what is queued, waits for it and returns its result
  /// (rethrows what it threw). Lanes run one job at a time, in order.
  template <class Work>
  auto run(Work work) -> decltype(work()) {
    std::packaged_task<decltype(work())()> task{std::move(work)};
    auto done = task.get_future();
    post([&task] { task(); });
    return done.get();
  }

  /// The thread's id (as in /proc/self/task).
  int tid() const;

private:
  void post(std::function<void()> job);
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Sets every thread of this process except the lanes' threads `steps` nice values above the
/// calling thread's value at the time of the first call (at most 19), including the calling thread
/// (threads it creates later inherit it). Goes over /proc/self/task until a pass changes nothing (a
/// thread created meanwhile is caught). Answers how many threads it lowered. For a process that is
/// the service (`contentlake serve`), never a library caller.
std::size_t lower_other_threads(int steps);

}  // namespace cl::actors
