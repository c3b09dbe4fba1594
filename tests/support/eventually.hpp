#pragma once
// Waiting on a condition, bounded: the only way tests wait for something asynchronous.

#include <chrono>
#include <thread>

namespace cl::testing {

/// Polls `condition` until it holds or `timeout_ms` passes; returns its last value.
template <class Condition>
bool eventually(Condition condition, int timeout_ms = 15000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{timeout_ms};
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return condition();
}

}  // namespace cl::testing
