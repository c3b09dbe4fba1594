// JSON Merge Patch (RFC 7396) of any two JSON values (the input's two NUL-separated halves).
#include "domain/resource.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <boost/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto f = cl::fuzz::fields(cl::fuzz::text(data, size), 2);
  boost::system::error_code a, b;
  auto target = boost::json::parse(f[0], a);
  auto patch = boost::json::parse(f[1], b);
  if (!a && !b) (void)cl::domain::merge_patch(std::move(target), patch);
  return 0;
}
