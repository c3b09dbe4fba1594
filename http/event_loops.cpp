#include "http/event_loops.hpp"

namespace cl::http {

event_loops::event_loops(int count) {
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
  for (auto& l : loops_) threads_.emplace_back([loop = l.get()] { loop->run(); });
}

void event_loops::finish() {
  held_.clear();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace cl::http
