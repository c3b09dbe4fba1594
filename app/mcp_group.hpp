#pragma once
/// The MCP route group's configuration section (`mcp.*`), in `settings::groups`; the composition
/// root reads `public_base_url` for the protected resource metadata it hands the listener.

#include <string>

namespace cl::app {

struct mcp_settings {
  std::string allowed_origins;  ///< Origins (comma-separated) whose pages may call /v0/mcp
  std::string public_base_url;  ///< the service's public URL; empty: http:// and the request's Host
};

}  // namespace cl::app
