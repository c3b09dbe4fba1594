// Route group: MCP (issue 30): POST /v0/mcp, a Model Context Protocol endpoint (2025-06-18,
// Streamable HTTP, stateless: no session to lose at a restart) whose tools run the REST routes'
// plans with the purpose AI_RETRIEVAL by MCP; and the OAuth protected resource metadata (RFC 9728)
// that a 401 points MCP clients to.

#include "actors/mcp/mcp_plans.hpp"
#include "app/build_info.hpp"
#include "app/groups.hpp"
#include "app/mcp_group.hpp"
#include "domain/mcp.hpp"
#include "http/resource_metadata.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

namespace cl::app {

namespace {

/// The protected resource metadata the composition root built (`local_context::metadata`).
domain::api_reply serve_resource_metadata(const domain::api_request& request, const http::local_context& locals) {
  if (!locals.metadata)
    return domain::api_reply::failure(domain::error_id::route_not_found, "No resource metadata is published here.");
  return locals.metadata->serve(request);
}

caf::expected<std::vector<actors::child_spec>> spawn_mcp(const startup& s) {
  const auto& section = s.settings.groups.get<mcp_settings>();
  auto policy = std::make_shared<actors::mcp_policy>();
  for (const auto& origin : config::comma_list(section.allowed_origins)) {
    if (origin.rfind("http://", 0) != 0 && origin.rfind("https://", 0) != 0)
      return startup_failure("mcp.allowed_origins: \"" + origin.substr(0, 100) + "\" is not an origin (scheme://host[:port])");
    policy->allowed_origins.push_back(origin);
  }
  const auto& base = section.public_base_url;
  if (!base.empty() && base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0)
    return startup_failure("mcp.public_base_url: expected an http:// or https:// URL");
  if (base.empty()) {
    const auto& host = s.settings.listen.host;
    auto origin = "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host);
    if (!domain::loopback_origin(origin))
      spdlog::warn("mcp.public_base_url is not set and the API listens on {}, not on loopback: the protected resource "
                   "metadata and every 401's resource_metadata name http:// and the request's Host header; set it to "
                   "the URL clients reach the service at",
                   host);
  }
  policy->server_version = std::string{build_version()};
  std::shared_ptr<const actors::mcp_policy> shared = policy;
  return std::vector<actors::child_spec>{actors::supervised<actors::mcp_actor>(
    "mcp", [shared](caf::actor_system& sys) { return sys.spawn(actors::mcp_holder, shared); })};
}

}  // namespace

void register_mcp(registry& r) {
  r.add_routes({
    {"POST", "/v0/mcp", "content-lake.read", &actors::plan_mcp, nullptr},
    {"GET", "/.well-known/oauth-protected-resource", "", nullptr, &serve_resource_metadata},
  });
  r.add_options({
    {"mcp.allowed_origins", "",
     "Origins (scheme://host[:port], separated by commas) whose web pages may call /v0/mcp; a request with any "
     "other Origin header is refused (DNS rebinding). Requests without Origin (non-browser clients) are accepted.",
     config::text_member(&mcp_settings::allowed_origins)},
    {"mcp.public_base_url", "",
     "The service's public URL (e.g. https://lake.example.com), named by the protected resource metadata and the "
     "resource_metadata of every 401; empty: http:// and the request's Host.",
     config::text_member(&mcp_settings::public_base_url)},
  });
  r.add_actors("mcp", &spawn_mcp);
}

}  // namespace cl::app
