#pragma once
/// OAuth 2.0 Protected Resource Metadata (RFC 9728) for the service's bearer tokens (issue 30):
/// `GET /.well-known/oauth-protected-resource`, and the `resource_metadata` parameter every 401's
/// `WWW-Authenticate` carries so a client (an MCP client first) finds the authorization server.
/// What it names is the process's (the issuer, the public base URL): set once at start by the MCP
/// group, read by the listener; one service per process (in-process tests start one at a time).

#include "domain/exchange.hpp"

#include <string>

namespace cl::http {

/// Publishes the issuer and the public base URL (empty: the request's `Host`, over http).
void publish_resource_metadata(std::string issuer, std::string public_base_url);

/// `<base>/.well-known/oauth-protected-resource` for a request that came with `host`; empty
/// before anything was published.
std::string resource_metadata_url(const std::string& host);

/// The metadata document (200 JSON), or 404 when nothing was published.
domain::api_reply serve_resource_metadata(const domain::api_request& request);

}  // namespace cl::http
