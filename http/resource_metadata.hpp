#pragma once
/// OAuth 2.0 Protected Resource Metadata (RFC 9728) for the service's bearer tokens (issue 30):
/// `GET /.well-known/oauth-protected-resource`, and the `resource_metadata` parameter every 401's
/// `WWW-Authenticate` carries so a client (an MCP client first) finds the authorization server.
/// The composition root builds one from the settings (the issuer, `mcp.public_base_url`) and hands
/// it to the public listener (for the 401s) and to the public API (for the route): no global.

#include "domain/exchange.hpp"

#include <string>

namespace cl::http {

/// What the metadata names: the issuer of the service's tokens and its public base URL.
class resource_metadata {
public:
  /// `public_base_url` empty: `http://` and each request's `Host`.
  resource_metadata(std::string issuer, std::string public_base_url);

  /// `<base>/.well-known/oauth-protected-resource` for a request that came with `host`; empty when
  /// no base URL is configured and `host` is not fit to put in a URL.
  std::string url_for(const std::string& host) const;

  /// The metadata document (200 JSON), or 404 when no base URL can be made for the request. One
  /// built from `Host` is kept by the client only (`private`, `Vary: Host`).
  domain::api_reply serve(const domain::api_request& request) const;

private:
  std::string base_for(const std::string& host) const;

  std::string issuer_, base_;
};

}  // namespace cl::http
