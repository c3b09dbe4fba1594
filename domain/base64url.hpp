#pragma once
/// base64url without padding (RFC 4648 section 5), as JWTs use it; standard base64 beside it.

#include <optional>
#include <string>
#include <string_view>

namespace cl::domain {

/// Encodes `bytes` as unpadded base64url.
std::string base64url_encode(std::string_view bytes);

/// Decodes strict unpadded base64url; nullopt on any character outside the alphabet,
/// on padding, or on an impossible length.
std::optional<std::string> base64url_decode(std::string_view text);

/// Standard base64 with padding (RFC 4648 section 4), as Standard Webhooks secrets and signatures use it.
std::string base64_encode(std::string_view bytes);

/// Decodes strict padded standard base64; nullopt otherwise.
std::optional<std::string> base64_decode(std::string_view text);

/// Lower-case hex of `bytes` (digests in ETags, SigV4, checksums).
std::string hex_encode(std::string_view bytes);

/// The bytes of hex text (either case); nullopt for an odd length or a character that is not hex.
std::optional<std::string> hex_decode(std::string_view text);

}  // namespace cl::domain
