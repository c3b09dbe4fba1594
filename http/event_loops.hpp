#pragma once
/// Event loops run by one thread each: the public listener's connections live on them (one loop a
/// connection, `listener`), so a request read, answered in place and written stays on one thread,
/// with no lock in the loop and no hop between threads.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <thread>
#include <vector>

namespace cl::http {

class event_loops {
public:
  explicit event_loops(int count);
  ~event_loops();
  event_loops(const event_loops&) = delete;
  event_loops& operator=(const event_loops&) = delete;

  /// The loops, for `listener`.
  std::vector<boost::asio::io_context*> loops() const;
  /// One thread for each loop; a loop runs until `finish`, even with nothing to do.
  void start();
  /// Lets each loop return once what is queued on it is done, and waits for their threads.
  void finish();

private:
  std::vector<std::unique_ptr<boost::asio::io_context>> loops_;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> held_;
  std::vector<std::thread> threads_;
};

}  // namespace cl::http
