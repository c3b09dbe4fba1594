#include "domain/clock.hpp"

#include <catch2/catch.hpp>

#include <chrono>

TEST_CASE("one clock: the system's, or the one a test sets", "[clock]") {
  auto system = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(cl::domain::now_ms() >= system);
  cl::domain::set_clock([]() -> std::int64_t { return 1763800000123; });
  CHECK(cl::domain::now_ms() == 1763800000123);
  CHECK(cl::domain::now_seconds() == 1763800000);
  cl::domain::set_clock(nullptr);
  CHECK(cl::domain::now_ms() >= system);
}
