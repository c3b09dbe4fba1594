#pragma once
/// Opaque page tokens (spec 4.5, AIP-158): URL-safe, bound to the tenant and the query they were
/// issued for, tamper-evident (HMAC-SHA-256 with a key kept in the data dir).

#include "domain/errors.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::domain {

/// Where the next page starts and what it belongs to.
struct page_cursor {
  std::string tenant;
  std::string query;  ///< canonical query fingerprint input (filters only: no page_size, no page_token)
  std::string after;  ///< the last key returned
};

/// Issues and checks page tokens with one secret.
class page_token_codec {
public:
  /// `secret`: at least 32 random bytes.
  explicit page_token_codec(std::string secret);

  /// The token for the page after `cursor.after`.
  std::string issue(const page_cursor& cursor) const;

  /// The `after` key of a token issued for this tenant and query; otherwise the error to answer
  /// with: PAGE_TOKEN_INVALID (malformed or tampered) or PAGE_TOKEN_MISMATCH (another tenant or
  /// another query).
  std::variant<std::string, api_error> open(std::string_view token, std::string_view tenant,
                                            std::string_view query) const;

private:
  std::string mac(std::string_view data) const;
  std::string secret_;
};

/// Canonical form of filter parameters (sorted name=value pairs joined with '&'), for binding
/// tokens to a query regardless of parameter order.
std::string canonical_query(std::vector<std::pair<std::string, std::string>> filters);

/// Page size per AIP-158 as decided in docs/api.md: absent -> 50, above 1000 -> 1000,
/// negative or not a number -> INVALID_ARGUMENT-style error.
std::variant<std::size_t, api_error> page_size_from(std::string_view raw);

}  // namespace cl::domain
