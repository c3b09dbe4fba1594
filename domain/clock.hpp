#pragma once
/// The wall clock, in one place. Everything that needs "now" (token expiry, rights windows,
/// idempotency retention, timestamps) reads it here, so a test can set the time once for all.

#include <cstdint>

namespace cl::domain {

/// Unix milliseconds now.
std::int64_t now_ms();

/// Unix seconds now.
inline std::int64_t now_seconds() { return now_ms() / 1000; }

/// Where "now" comes from: a function returning Unix milliseconds.
using clock_source = std::int64_t (*)();

/// Replaces the clock (tests); nullptr restores the system clock. Lock-free to read.
void set_clock(clock_source source);

}  // namespace cl::domain
