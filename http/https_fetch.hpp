#pragma once
/// The HTTPS client of the service (JWKS fetches; next, S3 calls). It lives beside the HTTP layer
/// and reaches actors only as an injected function, so no actor includes Beast.

#include <chrono>
#include <cstddef>
#include <string>

namespace cl::http {

/// GET `url` (https only) with TLS verification against the system CAs plus `extra_ca_file`.
/// Returns the body of a 200 answer; throws std::runtime_error (no secrets in the message).
std::string fetch_https(const std::string& url, const std::string& extra_ca_file,
                        std::chrono::milliseconds timeout, std::size_t max_bytes = 1 << 20);

}  // namespace cl::http
