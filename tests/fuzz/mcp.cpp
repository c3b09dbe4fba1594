// The MCP endpoint's JSON-RPC message parser and protocol-version check.
#include "domain/mcp.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto in = cl::fuzz::text(data, size);
  (void)cl::domain::parse_mcp_message(in);
  (void)cl::domain::mcp_version_supported(in);
  return 0;
}
