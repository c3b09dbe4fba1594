#pragma once
/// The access log's sink: one line per request on a file descriptor (standard output), gathered
/// per thread and written in whole batches. A thread appends to its own buffer under its own lock
/// (uncontended: only a flush takes it too), and writes the batch itself once it holds `batch`
/// bytes; `flush()` (once a second from `spdlog::flush_every`, and at exit) writes every thread's
/// lines. Each write(2) carries whole lines and writes are serialised, so lines never mix; lines of
/// different threads may come out of order by up to a second (each carries its time). On a
/// terminal every line is written at once. (One buffer behind one lock, shared by the I/O threads,
/// made them wait on each other on every request.)

#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>

#include <cstddef>
#include <memory>

namespace cl::app {

class access_sink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
public:
  access_sink(int fd, std::size_t batch);
  ~access_sink() override;

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;  ///< the message's payload, as is
  void flush_() override;

private:
  struct state;
  std::shared_ptr<state> state_;
};

}  // namespace cl::app
