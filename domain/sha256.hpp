#pragma once
/// SHA-256 of a byte string, for the paths that hash on every request (a token's cache key, a
/// Resource's hash): OpenSSL's one-shot `SHA256()` looks the algorithm up on every call, this
/// looks it up once and keeps a context per thread.

#include <array>
#include <string_view>

namespace cl::domain {

using sha256_digest = std::array<unsigned char, 32>;

sha256_digest sha256(std::string_view bytes);

}  // namespace cl::domain
