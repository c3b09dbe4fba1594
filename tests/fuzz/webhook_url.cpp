// The webhook URL check (SSRF screen), address and network-list parsing.
#include "domain/webhook.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto in = cl::fuzz::text(data, size);
  (void)cl::domain::parse_webhook_url(in, true);
  (void)cl::domain::parse_webhook_url(in, false);
  (void)cl::domain::parse_ip(in);
  (void)cl::domain::parse_networks(in);
  (void)cl::domain::webhook_secret_key(in);
  return 0;
}
