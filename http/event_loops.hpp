#pragma once
/// Event loops run by one thread each: the public listener's connections live on them (one loop a
/// connection, `listener`), so a request read, answered in place and written stays on one thread,
/// with no lock in the loop and no hop between threads.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace cl::http {

class event_loops {
public:
  /// `slice_us` > 0: each loop's thread asks the kernel for time slices that short (EEVDF's custom
  /// slice, Linux 6.12 and later; 0 leaves the kernel's default). A thread that answers requests
  /// then waits less for a core held by another thread, and takes it back sooner when woken.
  explicit event_loops(int count, int slice_us = 0);
  ~event_loops();
  event_loops(const event_loops&) = delete;
  event_loops& operator=(const event_loops&) = delete;

  /// The loops, for `listener`.
  std::vector<boost::asio::io_context*> loops() const;
  /// One thread for each loop (named `cl-http-<n>`); a loop runs until `finish`, even with nothing
  /// to do. Returns once every thread has asked for its slice.
  void start();
  /// Lets each loop return once what is queued on it is done, and waits for their threads.
  void finish();
  /// The slice the kernel gave the loops' threads, in microseconds (0: the kernel's default, when
  /// none was asked or the kernel keeps no slice per thread). Known after `start`.
  int slice_us() const { return granted_us_.load(); }

private:
  int asked_us_;
  std::atomic<int> granted_us_{0};
  std::vector<std::unique_ptr<boost::asio::io_context>> loops_;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> held_;
  std::vector<std::thread> threads_;
};

}  // namespace cl::http
