#pragma once
// Where the checkout and the built `contentlake` are, read at run time from CL_SOURCE_DIR and
// CL_BINARY (ctest sets both for every test, tests/CMakeLists.txt): nothing compiled depends on
// where the checkout is, so a clone in another directory reuses a warm compiler cache.

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace cl::testing {

inline const std::string& path_from_environment(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw std::runtime_error(std::string{name} + " is not set: run the tests through ctest");
  static thread_local std::string kept;
  kept = v;
  return kept;
}

/// The checkout's root.
inline std::string source_dir() { return path_from_environment("CL_SOURCE_DIR"); }

/// The `contentlake` binary under test.
inline std::string contentlake_binary() { return path_from_environment("CL_BINARY"); }

}  // namespace cl::testing
