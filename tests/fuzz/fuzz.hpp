#pragma once
// Shared helpers of the fuzz targets (issue 31, item 2). Each target is one LLVMFuzzerTestOneInput
// over the project's own parsing code; built with clang's libFuzzer by scripts/fuzz, or with
// replay_main.cpp (any compiler) so that ctest replays the seed corpus in the ordinary build.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The input cut at each NUL byte (several fields from one input), at least `n` parts.
inline std::vector<std::string> fields(std::string_view in, std::size_t n) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= in.size(); ++i)
    if (i == in.size() || in[i] == '\0') {
      out.emplace_back(in.substr(start, i - start));
      start = i + 1;
    }
  while (out.size() < n) out.emplace_back();
  return out;
}

}  // namespace cl::fuzz
