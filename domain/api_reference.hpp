#pragma once
/// The browsable API reference (`GET /v0/docs`, docs/api.md "The reference in a browser"): a page
/// that loads the pinned Redoc bundle from this service and renders the OpenAPI document this
/// service serves. Nothing on it comes from another origin, and the policy sent with it says so.

#include <string>
#include <string_view>

namespace cl::domain {

/// Where the page finds its parts (all on this service's origin).
inline constexpr std::string_view api_reference_path = "/v0/docs";
inline constexpr std::string_view api_reference_script_path = "/v0/docs/reference.js";
inline constexpr std::string_view api_document_path = "/v0/openapi.json";

/// The page: an empty `<redoc>` element and the script (`api_reference_script_path`) with `nonce`
/// on its tag, where the script reads it (`document.currentScript.nonce`: a browser hides a nonce
/// from attribute reads, but not from that property). No inline script. `nonce`: base64url
/// characters only (the caller makes it random per answer).
std::string api_reference_page(std::string_view nonce);

/// What follows Redoc's bundle in the page's script: Redoc started on the page's element with
/// the document's URL, its options, and the nonce its injected styles must carry.
std::string_view api_reference_start();

/// The page's `Content-Security-Policy`: nothing outside this origin for scripts, styles, fonts,
/// images and connections; Redoc's injected `<style>` elements allowed by `nonce` alone (no
/// 'unsafe-inline'); its search worker from `blob:` (Redoc builds it from its own bundle); no
/// frames, no plugins, no form posts, no base URL.
std::string api_reference_policy(std::string_view nonce);

}  // namespace cl::domain
