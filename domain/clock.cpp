#include "domain/clock.hpp"

#include <atomic>
#include <chrono>

namespace cl::domain {

namespace {

std::atomic<clock_source> source{nullptr};  ///< null: the system clock

}  // namespace

std::int64_t now_ms() {
  if (auto s = source.load(std::memory_order_relaxed)) return s();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

void set_clock(clock_source s) {
  source.store(s);
}

}  // namespace cl::domain
