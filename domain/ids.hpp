#pragma once
/// Opaque identifiers: random, at least 96 bits, with the spec's prefixes (section 2.1).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cl::domain {

/// Lowercase base32 (RFC 4648 alphabet, no padding) of `bytes`.
std::string base32_lower(std::string_view bytes);

/// Lowercase base32hex (RFC 4648 section 7, digits then a-v, no padding) of `bytes`: its text
/// sorts like the bytes, so time-prefixed ids sort by time.
std::string base32hex_lower(std::string_view bytes);

/// A new id: `prefix` + 29 lowercase base32hex characters of 18 bytes, a 48-bit big-endian Unix
/// millisecond timestamp then 96 random bits. Ids made later sort later (across milliseconds),
/// so a group commit's inserts land next to each other in the stores' B-trees.
std::string random_id(std::string_view prefix);

/// The Unix millisecond timestamp `random_id(prefix)` put at the start of `id`; nullopt for
/// anything that is not `prefix` + 29 base32hex characters.
std::optional<std::int64_t> id_millis(std::string_view id, std::string_view prefix);

/// Lowercase base32 of `bytes` (at most 32) bytes from the CSPRNG: a secret no one can guess, such
/// as a page's CSP nonce (16 bytes: 128 bits).
std::string random_base32(std::size_t bytes);

/// A new request id for `X-Request-Id` when the client sent none or an unusable one.
std::string new_request_id();

/// True for a client-supplied `X-Request-Id` we echo: 1..128 characters of [A-Za-z0-9._:-].
bool is_valid_request_id(std::string_view id);

}  // namespace cl::domain
