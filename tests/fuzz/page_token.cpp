// Page-token opening (tampered, truncated, another tenant's) and page_size parsing; and the round
// trip: a token issued for any (tenant, query, after) opens to that `after`, for that tenant and
// query only.
#include "domain/page_token.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <cstdlib>
#include <string>
#include <variant>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cl::domain::page_token_codec codec{std::string(32, 'k')};
  auto in = cl::fuzz::text(data, size);
  (void)codec.open(in, "t_a", "type=ARTICLE");
  (void)cl::domain::page_size_from(in);
  if (size > 2000) return 0;  // a token's length is bounded (4,096): long inputs only test the refusal
  auto f = cl::fuzz::fields(in, 3);
  auto token = codec.issue({f[0], f[1], f[2]});
  auto opened = codec.open(token, f[0], f[1]);
  if (!std::holds_alternative<std::string>(opened) || std::get<std::string>(opened) != f[2]) std::abort();
  if (std::holds_alternative<std::string>(codec.open(token, f[0] + "x", f[1]))) std::abort();  // another tenant
  if (std::holds_alternative<std::string>(codec.open(token, f[0], f[1] + "x"))) std::abort();  // other filters
  return 0;
}
