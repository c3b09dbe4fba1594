// The API's description of itself, served without a token: the OpenAPI document and the
// browsable reference rendered from it (docs/api.md "The reference in a browser"). Each answer is
// made of bytes compiled into the binary, tagged with their SHA-256, and answered 304 to a client
// that holds them.

#include "app/groups.hpp"
#include "domain/api_reference.hpp"
#include "domain/ids.hpp"
#include "domain/negotiation.hpp"
#include "domain/resource.hpp"
#include "http/openapi.hpp"
#include "http/reference_assets.hpp"

#include <string>
#include <string_view>

namespace cl::app {

namespace {

/// `"<the first 32 hex digits of the SHA-256 of bytes>"`.
std::string entity_tag(std::string_view bytes) { return "\"" + domain::sha256_tag(bytes).substr(7, 32) + "\""; }

/// An answer tagged `tag` (`"x"`, or weak `W/"x"`) with `cache_control`: a 304 without a body (so
/// without a Content-Type, as every 304 of this API) when `If-None-Match` names the tag; else the
/// caller adds the body.
domain::api_reply tagged(const domain::api_request& q, std::string_view tag, std::string_view cache_control) {
  domain::api_reply r;
  r.headers.emplace_back("Cache-Control", std::string{cache_control});
  r.headers.emplace_back("ETag", std::string{tag});
  if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
  if (domain::if_none_match_hits(q.if_none_match, tag.substr(1, tag.size() - 2))) {
    r.status = 304;
    r.content_type.clear();
  }
  return r;
}

/// `bytes` as `type`, tagged with `tag`, public for five minutes.
domain::api_reply tagged_bytes(const domain::api_request& q, std::string_view type, std::string_view bytes,
                               const std::string& tag) {
  auto r = tagged(q, tag, "public, max-age=300");
  if (r.status == 304) return r;
  r.content_type = std::string{type};
  r.body = std::string{bytes};
  return r;
}

domain::api_reply serve_openapi(const domain::api_request& q, const http::local_context&) {
  static const std::string tag = entity_tag(http::openapi_document());
  return tagged_bytes(q, "application/json", http::openapi_document(), tag);
}

/// Redoc's bundle, then the lines that start it on the page (domain::api_reference_start).
const std::string& reference_script() {
  static const std::string script = std::string{http::redoc_bundle()} + std::string{domain::api_reference_start()};
  return script;
}

domain::api_reply serve_script(const domain::api_request& q, const http::local_context&) {
  if (auto refusal = domain::refuse_unless(q.accept, "text/javascript")) return domain::api_reply::from(std::move(*refusal));
  static const std::string tag = entity_tag(reference_script());
  return tagged_bytes(q, "text/javascript; charset=utf-8", reference_script(), tag);
}

/// The page. Its bytes differ per answer only by the nonce of its policy, so its tag is weak and
/// names what it shows: the page, the script and the document. A 304 carries no policy: the client
/// keeps the page it holds with the policy that came with it (their nonces agree).
domain::api_reply serve_reference(const domain::api_request& q, const http::local_context&) {
  if (auto refusal = domain::refuse_unless(q.accept, "text/html")) return domain::api_reply::from(std::move(*refusal));
  static const std::string tag
    = "W/" + entity_tag(domain::api_reference_page("") + reference_script() + std::string{http::openapi_document()});
  auto r = tagged(q, tag, "no-cache");
  if (r.status == 304) return r;
  r.content_type = "text/html; charset=utf-8";
  auto nonce = domain::random_base32(16);  // 128 bits, as CSP asks of a nonce
  r.headers.emplace_back("Content-Security-Policy", domain::api_reference_policy(nonce));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.body = domain::api_reference_page(nonce);
  return r;
}

}  // namespace

void register_reference(registry& r) {
  http::route page{"GET", domain::api_reference_path, "", nullptr, &serve_reference};
  page.reads_accept = true;
  http::route script{"GET", domain::api_reference_script_path, "", nullptr, &serve_script};
  script.reads_accept = true;
  r.add_routes({{"GET", domain::api_document_path, "", nullptr, &serve_openapi}, page, script});
}

}  // namespace cl::app
