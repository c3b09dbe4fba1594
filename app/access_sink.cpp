#include "app/access_sink.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

namespace cl::app {

namespace {

/// One thread's lines not yet written.
struct thread_lines {
  std::mutex mutex;
  std::string text;
};

std::atomic<std::uint64_t> next_generation{1};

}  // namespace

struct access_sink::state {
  state(int fd, std::size_t batch) : fd(fd), terminal(::isatty(fd) == 1), batch(batch) {}

  const int fd;
  const bool terminal;
  const std::size_t batch;
  std::uint64_t generation = next_generation++;
  std::mutex registry;                              ///< guards `buffers`
  std::vector<std::shared_ptr<thread_lines>> buffers;  ///< every thread's that logged; a dead thread's until flushed
  std::mutex writing;                               ///< one write(2) at a time: lines never mix

  void write(const std::string& text) {
    std::lock_guard<std::mutex> guard{writing};
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      auto n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // a closed or broken output: the lines are dropped, the service goes on
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  /// The calling thread's buffer for this sink, registered on its first line.
  thread_lines& local() {
    thread_local std::uint64_t owner = 0;
    thread_local std::shared_ptr<thread_lines> mine;
    if (owner != generation) {
      mine = std::make_shared<thread_lines>();
      std::lock_guard<std::mutex> guard{registry};
      buffers.push_back(mine);
      owner = generation;
    }
    return *mine;
  }

  /// Writes what `lines` holds.
  void drain(thread_lines& lines) {
    std::string out;
    {
      std::lock_guard<std::mutex> guard{lines.mutex};
      out.swap(lines.text);
    }
    if (!out.empty()) write(out);
  }
};

access_sink::access_sink(int fd, std::size_t batch)
  : state_(std::make_shared<state>(fd, batch)) {}

access_sink::~access_sink() { flush_(); }

void access_sink::sink_it_(const spdlog::details::log_msg& msg) {
  auto& lines = state_->local();
  std::string out;
  {
    std::lock_guard<std::mutex> guard{lines.mutex};
    if (lines.text.empty()) lines.text.reserve(state_->terminal ? 512 : state_->batch + 1024);
    lines.text.append(msg.payload.data(), msg.payload.size());
    lines.text.push_back('\n');
    if (!state_->terminal && lines.text.size() < state_->batch) return;
    out.swap(lines.text);
  }
  state_->write(out);
}

void access_sink::flush_() {
  std::vector<std::shared_ptr<thread_lines>> all;
  {
    std::lock_guard<std::mutex> guard{state_->registry};
    all = state_->buffers;
  }
  for (auto& lines : all) state_->drain(*lines);
  // A buffer held only by `all` and the registry is a thread's that has ended: drained once more
  // (lines it wrote after the pass above), then dropped.
  std::lock_guard<std::mutex> guard{state_->registry};
  auto& registered = state_->buffers;
  for (auto& lines : all) {
    if (lines.use_count() != 2) continue;
    state_->drain(*lines);
    auto at = std::find(registered.begin(), registered.end(), lines);
    if (at != registered.end()) registered.erase(at);  // unless a flush beside this one did
  }
}

}  // namespace cl::app
