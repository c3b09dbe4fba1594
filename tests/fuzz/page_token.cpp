// Page-token opening (tampered, truncated, another tenant's) and page_size parsing.
#include "domain/page_token.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cl::domain::page_token_codec codec{std::string(32, 'k')};
  auto in = cl::fuzz::text(data, size);
  (void)codec.open(in, "t_a", "type=ARTICLE");
  (void)cl::domain::page_size_from(in);
  return 0;
}
