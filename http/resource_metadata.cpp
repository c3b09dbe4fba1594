#include "http/resource_metadata.hpp"

#include <boost/json.hpp>

#include <memory>
#include <mutex>

namespace cl::http {

namespace {

struct published {
  std::string issuer, base;
};

std::mutex mutex;
std::shared_ptr<const published> current;

std::shared_ptr<const published> get() {
  std::lock_guard<std::mutex> guard{mutex};
  return current;
}

/// A Host header fit to put in a URL (what the listener accepted; anything odd: none).
bool plain_host(const std::string& host) {
  if (host.empty() || host.size() > 255) return false;
  for (char c : host)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
      return false;
  return true;
}

std::string base_for(const published& p, const std::string& host) {
  if (!p.base.empty()) return p.base;
  return plain_host(host) ? "http://" + host : "";
}

}  // namespace

void publish_resource_metadata(std::string issuer, std::string public_base_url) {
  while (!public_base_url.empty() && public_base_url.back() == '/') public_base_url.pop_back();
  auto next = std::make_shared<const published>(published{std::move(issuer), std::move(public_base_url)});
  std::lock_guard<std::mutex> guard{mutex};
  current = std::move(next);
}

std::string resource_metadata_url(const std::string& host) {
  auto p = get();
  if (!p) return "";
  auto base = base_for(*p, host);
  return base.empty() ? "" : base + "/.well-known/oauth-protected-resource";
}

domain::api_reply serve_resource_metadata(const domain::api_request& request) {
  auto p = get();
  auto base = p ? base_for(*p, request.host) : "";
  if (!p || base.empty())
    return domain::api_reply::failure(domain::error_id::route_not_found, "No resource metadata is published here.");
  namespace json = boost::json;
  json::object doc{
    {"resource", base},
    {"authorization_servers", json::array{json::value(p->issuer)}},
    {"bearer_methods_supported", json::array{"header"}},
    {"scopes_supported", json::array{"content-lake.read", "content-lake.write", "contracts.read", "contracts.write",
                                     "contracts.commercial.read", "webhooks.read", "webhooks.write"}},
    {"resource_name", "Content Lake"},
    {"resource_documentation", base + "/v0/openapi.json"}};
  domain::api_reply r;
  r.body = json::serialize(doc);
  // A document built from the request's Host differs by Host: a shared cache must not hand one
  // host's document to another (cache poisoning), so it is kept only by the client.
  if (p->base.empty()) {
    r.headers.emplace_back("Cache-Control", "private, max-age=300");
    r.headers.emplace_back("Vary", "Host");
  } else {
    r.headers.emplace_back("Cache-Control", "public, max-age=300");
  }
  return r;
}

}  // namespace cl::http
