#pragma once
/// The service's symmetric sealing and keyed hashing (OpenSSL): AES-256-GCM with a random nonce for
/// what it hands out or keeps secret (change feed cursors, webhook signing secrets at rest), and
/// HMAC-SHA256 for keys derived from a data dir's secret and for signatures.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cl::domain {

/// HMAC-SHA256 of `data` under `key` (32 raw bytes).
std::string hmac_sha256(std::string_view key, std::string_view data);

/// `n` bytes from the system's CSPRNG; throws std::runtime_error when it has none.
std::string random_bytes(std::size_t n);

/// AES-256-GCM of `plain` under `key` (32 bytes): a fresh 12-byte nonce, the ciphertext, the 16-byte tag.
std::string aead_seal(std::string_view key, std::string_view plain);

/// The plaintext of what `aead_seal` made under `key`, or nullopt when it does not verify
/// (altered, truncated, or sealed under another key).
std::optional<std::string> aead_open(std::string_view key, std::string_view sealed);

/// What `aead_seal` adds to a plaintext's length.
constexpr std::size_t aead_overhead = 12 + 16;

}  // namespace cl::domain
