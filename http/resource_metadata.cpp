#include "http/resource_metadata.hpp"

#include <boost/json.hpp>

#include <cctype>

namespace cl::http {

namespace {

/// A Host header fit to put in a URL (what the listener accepted; anything odd: none).
bool plain_host(const std::string& host) {
  if (host.empty() || host.size() > 255) return false;
  for (char c : host)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
      return false;
  return true;
}

}  // namespace

resource_metadata::resource_metadata(std::string issuer, std::string public_base_url)
  : issuer_(std::move(issuer)), base_(std::move(public_base_url)) {
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

std::string resource_metadata::base_for(const std::string& host) const {
  if (!base_.empty()) return base_;
  return plain_host(host) ? "http://" + host : "";
}

std::string resource_metadata::url_for(const std::string& host) const {
  auto base = base_for(host);
  return base.empty() ? "" : base + "/.well-known/oauth-protected-resource";
}

domain::api_reply resource_metadata::serve(const domain::api_request& request) const {
  auto base = base_for(request.host);
  if (base.empty())
    return domain::api_reply::failure(domain::error_id::route_not_found, "No resource metadata is published here.");
  namespace json = boost::json;
  json::object doc{
    {"resource", base},
    {"authorization_servers", json::array{json::value(issuer_)}},
    {"bearer_methods_supported", json::array{"header"}},
    {"scopes_supported", json::array{"content-lake.read", "content-lake.write", "contracts.read", "contracts.write",
                                     "contracts.commercial.read", "webhooks.read", "webhooks.write"}},
    {"resource_name", "Content Lake"},
    {"resource_documentation", base + "/v0/openapi.json"}};
  domain::api_reply r;
  r.body = json::serialize(doc);
  // A document built from the request's Host differs by Host: a shared cache must not hand one
  // host's document to another (cache poisoning), so it is kept only by the client.
  if (base_.empty()) {
    r.headers.emplace_back("Cache-Control", "private, max-age=300");
    r.headers.emplace_back("Vary", "Host");
  } else {
    r.headers.emplace_back("Cache-Control", "public, max-age=300");
  }
  return r;
}

}  // namespace cl::http
