// JSON Merge Patch (RFC 7396) of any two JSON values (the input's two NUL-separated halves); and
// its invariant: a patch applied twice gives what it gives once.
#include "domain/resource.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <boost/json.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto f = cl::fuzz::fields(cl::fuzz::text(data, size), 2);
  boost::system::error_code a, b;
  auto target = boost::json::parse(f[0], a);
  auto patch = boost::json::parse(f[1], b);
  if (a || b) return 0;
  auto once = cl::domain::merge_patch(std::move(target), patch);
  auto twice = cl::domain::merge_patch(once, patch);
  if (twice != once) std::abort();
  return 0;
}
