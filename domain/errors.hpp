#pragma once
/// The error catalogue: every failure a client can see, with its HTTP status, `code`, `reason`
/// and `domain` (spec section 7). Those strings are API: clients branch on `reason` and `domain`.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cl::domain {

/// One value per documented reason. Add an entry here and in `catalogue()`; nothing else.
enum class error_id : std::uint8_t {
  token_missing,
  token_invalid,
  token_expired,
  auth_stale,
  tenant_mismatch,
  scope_missing,
  human_required,
  access_denied,
  usage_prohibited,
  limit_exceeded,
  malformed_request,
  duplicate_parameter,
  invalid_argument,
  resource_not_staged,
  last_owner,
  checksum_mismatch,
  size_mismatch,
  upload_incomplete,
  query_syntax,
  page_token_invalid,
  page_token_mismatch,
  cursor_invalid,
  cursor_mismatch,
  idempotency_key_invalid,
  position_invalid,
  pcf001, pcf002, pcf003, pcf004, pcf005, pcf006, pcf007, pcf008, pcf009, pcf010, pcf011,
  route_not_found,
  resource_not_found,
  version_not_found,
  content_unit_not_found,
  work_not_found,
  source_not_found,
  activity_not_found,
  contract_not_found,
  grant_not_found,
  webhook_not_found,
  origin_not_allowed,
  storage_full,
  fault_injection_disabled,
  mcp_protocol_version_unsupported,
  upload_not_found,
  blob_not_found,
  search_session_not_found,
  search_session_expired,
  cursor_expired,
  token_mismatch,
  idempotency_key_in_use,
  idempotency_key_mismatch,
  upload_not_in_progress,
  method_not_allowed,
  not_acceptable,
  unsupported_media_type,
  rate_limited,
  too_many_held_requests,
  backend_unavailable,
  search_index_rebuilding,
  position_not_reached,
  search_index_behind,
  server_overloaded,
  transfer_encoding_unsupported,
  internal,
};

/// A catalogue row: everything about an error that is stable API.
struct error_entry {
  error_id id;
  int http_status;
  std::string_view code;    ///< status name, e.g. PERMISSION_DENIED
  std::string_view reason;  ///< machine-readable reason clients branch on
  std::string_view domain;  ///< error domain, e.g. auth.service.com
  std::string_view when;    ///< one line for docs: when a client gets it
};

inline constexpr std::string_view auth_domain = "auth.service.com";
inline constexpr std::string_view contentlake_domain = "contentlake.service.com";

/// Every documented error, in declaration order of `error_id`.
const std::vector<error_entry>& catalogue();

/// The catalogue row of `id`.
const error_entry& entry(error_id id);

/// A field-level entry of `error.details` (shape decided in docs/api.md).
struct error_detail {
  std::string field;        ///< parameter, header or JSON path the entry is about
  std::string description;  ///< what is wrong with it
};

/// An error as it travels through the service: catalogue id plus human text and details.
/// The message never carries a token, a presigned URL or a secret.
struct api_error {
  error_id id = error_id::internal;
  std::string message;
  std::vector<error_detail> details;
};

/// Renders `{"error":{"code","reason","domain","message","details":[...]}}`.
std::string render_error_body(const api_error& err);

}  // namespace cl::domain
