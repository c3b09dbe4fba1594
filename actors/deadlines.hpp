#pragma once
/// One deadline per request instead of one CAF clock registration per ask.
///
/// Every finite `request(..., timeout, ...)` registers with CAF's clock thread and wakes it
/// (a mutex, a condition variable and a thread switch per ask). A read asks three or four actors,
/// and profiling put a quarter of the CPU of a request there. Coordinators therefore ask with
/// `caf::infinite` and register their request here once; a single thread checks the deadlines
/// every tick without being woken per registration. A dead callee is still noticed at once
/// (CAF answers `request_receiver_down`); a late one is cut off when the deadline passes.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cl::actors {

/// Something that must end when its deadline passes (a request in flight).
class deadline_target {
public:
  virtual ~deadline_target() = default;
  /// Called at most once, from the watching thread, when the deadline passed and the target is
  /// still alive.
  virtual void expire() = 0;
};

class deadline_watch {
public:
  using clock = std::chrono::steady_clock;

  /// Starts the watching thread, which looks at the deadlines every `tick`: a request is cut
  /// off between its deadline and one tick later.
  explicit deadline_watch(std::chrono::milliseconds tick);

  /// No thread: whoever owns the watch calls `expire_due` (deterministic tests).
  deadline_watch();

  ~deadline_watch();
  deadline_watch(const deadline_watch&) = delete;
  deadline_watch& operator=(const deadline_watch&) = delete;

  /// Expires `target` at `at` unless it is gone by then. Cheap: a lock and a heap push.
  /// Entries of targets already gone are dropped once they outnumber the rest (a blob completion's
  /// deadline is 30 minutes: its entry must not outlive the request that long), so what is held
  /// follows the requests in flight, at amortised constant cost per watch.
  void watch(clock::time_point at, std::weak_ptr<deadline_target> target);

  /// Expires every live target whose deadline is at or before `now`; returns how many.
  std::size_t expire_due(clock::time_point now);

  /// Deadlines held: those of requests in flight, and of finished ones not yet dropped (at most
  /// about as many again, plus `compact_floor`).
  std::size_t pending() const;

  /// Below this many entries nothing is dropped early.
  static constexpr std::size_t compact_floor = 1024;

private:
  struct entry {
    clock::time_point at;
    std::weak_ptr<deadline_target> target;
    bool operator>(const entry& other) const { return at > other.at; }
  };

  mutable std::mutex mutex_;
  std::vector<entry> heap_;  ///< a min-heap by `at` (std::push_heap with std::greater)
  std::size_t compact_at_ = compact_floor;  ///< the size at which gone targets' entries are dropped
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cl::actors
