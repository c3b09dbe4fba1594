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

#include "domain/records.hpp"

TEST_CASE("timestamps: ISO 8601 UTC with milliseconds, also across seconds and before 1970", "[clock]") {
  using cl::domain::iso8601_at_ms;
  CHECK(iso8601_at_ms(0) == "1970-01-01T00:00:00.000Z");
  CHECK(iso8601_at_ms(1700000000123) == "2023-11-14T22:13:20.123Z");
  CHECK(iso8601_at_ms(1700000000999) == "2023-11-14T22:13:20.999Z");  // the same second, formatted once
  CHECK(iso8601_at_ms(1700000001007) == "2023-11-14T22:13:21.007Z");  // the next one
  CHECK(iso8601_at_ms(1700000000050) == "2023-11-14T22:13:20.050Z");  // and back
  CHECK(iso8601_at_ms(-1) == "1969-12-31T23:59:59.999Z");
}
