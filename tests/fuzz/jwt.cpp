// Bearer-token verification: parsing of the compact form, header and claims, up to the signature.
#include "domain/jwt.hpp"
#include "tests/fuzz/fuzz.hpp"
#include "tests/support/test_keys.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto keys = [] {
    std::string error;
    return *cl::domain::key_set::parse(cl::testing::test_key().jwks_json(cl::testing::test_kid()), &error);
  }();
  cl::domain::verify_options opts;
  opts.issuer = cl::testing::test_issuer;
  opts.now = 1'800'000'000;
  (void)cl::domain::verify_token(cl::fuzz::text(data, size), keys, opts);
  return 0;
}
