#include "domain/errors.hpp"

#include "domain/json_text.hpp"

namespace cl::domain {

const std::vector<error_entry>& catalogue() {
  static const std::vector<error_entry> rows = {
    {error_id::token_missing, 401, "UNAUTHENTICATED", "TOKEN_MISSING", auth_domain,
     "The request carries no `Authorization: Bearer` token."},
    {error_id::token_invalid, 401, "UNAUTHENTICATED", "TOKEN_INVALID", auth_domain,
     "The token is malformed, not RS256, signed by an unknown key, has a bad signature or claims."},
    {error_id::token_expired, 401, "UNAUTHENTICATED", "TOKEN_EXPIRED", auth_domain,
     "The token's `exp` is in the past (60 s clock skew allowed)."},
    {error_id::auth_stale, 401, "UNAUTHENTICATED", "AUTH_STALE", auth_domain,
     "A sensitive operation needs a recent interactive sign-in (spec 5.4): the token's `auth_time` is older than "
     "auth.recent_sign_in_seconds (or absent); sign in again and retry. `WWW-Authenticate` carries `max_age`."},
    {error_id::tenant_mismatch, 403, "PERMISSION_DENIED", "TENANT_MISMATCH", auth_domain,
     "The token names no tenant, or a tenant other than the one operated on."},
    {error_id::scope_missing, 403, "PERMISSION_DENIED", "SCOPE_MISSING", auth_domain,
     "The token lacks the scope the route requires; the message names it."},
    {error_id::human_required, 403, "PERMISSION_DENIED", "HUMAN_REQUIRED", auth_domain,
     "The operation is one only a person may perform (spec 5.4); an application token (`a_` subject) cannot."},
    {error_id::access_denied, 403, "PERMISSION_DENIED", "ACCESS_DENIED", contentlake_domain,
     "The caller holds no access grant on the Resource (directly or through a group) that allows this, or the "
     "Resource does not exist: permission is checked before existence (layer 2)."},
    {error_id::usage_prohibited, 403, "PERMISSION_DENIED", "USAGE_PROHIBITED", contentlake_domain,
     "The Resource's resolved rights do not allow this use of its content (layer 3); details name the usage."},
    {error_id::limit_exceeded, 400, "INVALID_ARGUMENT", "LIMIT_EXCEEDED", contentlake_domain,
     "A documented limit was exceeded (header block, body size, ...); details name the limit."},
    {error_id::malformed_request, 400, "INVALID_ARGUMENT", "MALFORMED_REQUEST", contentlake_domain,
     "The request is not well-formed HTTP/1.1."},
    {error_id::duplicate_parameter, 400, "INVALID_ARGUMENT", "DUPLICATE_PARAMETER", contentlake_domain,
     "A query parameter or a header that takes one value was sent more than once; details name it."},
    {error_id::invalid_argument, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", contentlake_domain,
     "A parameter or body field is invalid; details name it."},
    {error_id::resource_not_staged, 400, "FAILED_PRECONDITION", "RESOURCE_NOT_STAGED", contentlake_domain,
     "Only a staged Resource (one without a Work) can be promoted; this one is attached already."},
    {error_id::last_owner, 400, "FAILED_PRECONDITION", "LAST_OWNER", contentlake_domain,
     "The change would leave the Resource without an owner; grant owner to someone else first."},
    {error_id::checksum_mismatch, 400, "INVALID_ARGUMENT", "CHECKSUM_MISMATCH", contentlake_domain,
     "The SHA-256 the object store computed over the uploaded bytes differs from the declared one; the upload stays "
     "in progress: upload the right bytes (or parts) again and complete again."},
    {error_id::size_mismatch, 400, "INVALID_ARGUMENT", "SIZE_MISMATCH", contentlake_domain,
     "The uploaded bytes are not the size declared when the upload started; the upload stays in progress."},
    {error_id::upload_incomplete, 400, "FAILED_PRECONDITION", "UPLOAD_INCOMPLETE", contentlake_domain,
     "The object store holds nothing for this upload yet, or not every part; details name the missing parts."},
    {error_id::query_syntax, 400, "INVALID_ARGUMENT", "QUERY_SYNTAX", contentlake_domain,
     "The search query cannot be parsed (an operator with nothing on one side, a query of NOT terms only); the "
     "message says where. Unbalanced brackets and quotes are read leniently, not refused."},
    {error_id::page_token_invalid, 400, "INVALID_ARGUMENT", "PAGE_TOKEN_INVALID", contentlake_domain,
     "The page_token is malformed or was altered."},
    {error_id::page_token_mismatch, 400, "INVALID_ARGUMENT", "PAGE_TOKEN_MISMATCH", contentlake_domain,
     "The page_token was issued for another tenant or another query; restart from the first page."},
    {error_id::cursor_invalid, 400, "INVALID_ARGUMENT", "CURSOR_INVALID", contentlake_domain,
     "The change feed's `since` is not a cursor this service issued (malformed, altered, or from another data dir)."},
    {error_id::cursor_mismatch, 400, "INVALID_ARGUMENT", "CURSOR_MISMATCH", contentlake_domain,
     "The change feed's `since` was issued for another tenant or other `types`: follow a cursor with the `types` it "
     "was issued for."},
    {error_id::idempotency_key_invalid, 400, "INVALID_ARGUMENT", "IDEMPOTENCY_KEY_INVALID", contentlake_domain,
     "The Idempotency-Key header is empty, longer than 255 characters or not visible ASCII."},
    {error_id::position_invalid, 400, "INVALID_ARGUMENT", "POSITION_INVALID", contentlake_domain,
     "The Content-Lake-Position header is not a position this API handed out to the caller's tenant (send back "
     "the value of a write answer's Content-Lake-Position, unchanged; one from another tenant, another deployment "
     "or before a restore does not open)."},
    {error_id::pcf001, 400, "INVALID_ARGUMENT", "PCF001", contentlake_domain,
     "The content is not a `cl.content/1` document (format, top-level members). Details name the JSON path."},
    {error_id::pcf002, 400, "INVALID_ARGUMENT", "PCF002", contentlake_domain,
     "`blocks` is not an array of at most 10,000 block objects. Details name the JSON path."},
    {error_id::pcf003, 400, "INVALID_ARGUMENT", "PCF003", contentlake_domain,
     "A block has an unknown `type`. Details name the JSON path."},
    {error_id::pcf004, 400, "INVALID_ARGUMENT", "PCF004", contentlake_domain,
     "A block `key` is malformed or not unique. Details name the JSON path."},
    {error_id::pcf005, 400, "INVALID_ARGUMENT", "PCF005", contentlake_domain,
     "Text is malformed: `children` spans, span `text`, code `text`, or a control character other than tab, LF "
     "and CR in any string of the content. Details name the JSON path."},
    {error_id::pcf006, 400, "INVALID_ARGUMENT", "PCF006", contentlake_domain,
     "A heading `level` is not 1 to 6. Details name the JSON path."},
    {error_id::pcf007, 400, "INVALID_ARGUMENT", "PCF007", contentlake_domain,
     "A span mark is neither a decorator nor a key of the block's `mark_defs`. Details name the JSON path."},
    {error_id::pcf008, 400, "INVALID_ARGUMENT", "PCF008", contentlake_domain,
     "A mark definition is not a well-formed `link` or `entity`. Details name the JSON path."},
    {error_id::pcf009, 400, "INVALID_ARGUMENT", "PCF009", contentlake_domain,
     "A list is malformed (`ordered`, `items`, nesting over 8). Details name the JSON path."},
    {error_id::pcf010, 400, "INVALID_ARGUMENT", "PCF010", contentlake_domain,
     "A table is malformed (rows of equal width, cells, `header_rows`). Details name the JSON path."},
    {error_id::pcf011, 400, "INVALID_ARGUMENT", "PCF011", contentlake_domain,
     "An image lacks a `blb_` blob reference or `alt` text, or references a blob that does not exist or the writer may not read. Details name the JSON path."},
    {error_id::route_not_found, 404, "NOT_FOUND", "ROUTE_NOT_FOUND", contentlake_domain,
     "No route has this path."},
    {error_id::resource_not_found, 404, "NOT_FOUND", "RESOURCE_NOT_FOUND", contentlake_domain,
     "No Resource with this id exists in the token's tenant (given only where the caller may know: "
     "a caller without a grant gets 403 ACCESS_DENIED)."},
    {error_id::version_not_found, 404, "NOT_FOUND", "VERSION_NOT_FOUND", contentlake_domain,
     "The Resource has no snapshot with this version id."},
    {error_id::content_unit_not_found, 404, "NOT_FOUND", "CONTENT_UNIT_NOT_FOUND", contentlake_domain,
     "No content unit with this id exists in the token's tenant (its block may have been removed)."},
    {error_id::work_not_found, 404, "NOT_FOUND", "WORK_NOT_FOUND", contentlake_domain,
     "No Work with this id exists in the token's tenant."},
    {error_id::source_not_found, 404, "NOT_FOUND", "SOURCE_NOT_FOUND", contentlake_domain,
     "No Source with this id exists in the token's tenant."},
    {error_id::activity_not_found, 404, "NOT_FOUND", "ACTIVITY_NOT_FOUND", contentlake_domain,
     "No Activity with this id exists in the token's tenant."},
    {error_id::contract_not_found, 404, "NOT_FOUND", "CONTRACT_NOT_FOUND", contentlake_domain,
     "No contract (or no such version of it) with this id exists in the tenant."},
    {error_id::grant_not_found, 404, "NOT_FOUND", "GRANT_NOT_FOUND", contentlake_domain,
     "The Resource has no grant for this principal."},
    {error_id::webhook_not_found, 404, "NOT_FOUND", "WEBHOOK_NOT_FOUND", contentlake_domain,
     "The caller owns no webhook with this id (another principal's and another tenant's are answered the same)."},
    {error_id::origin_not_allowed, 403, "PERMISSION_DENIED", "ORIGIN_NOT_ALLOWED", contentlake_domain,
     "The request's Origin is neither in `mcp.allowed_origins` nor a page of this machine (localhost, 127.0.0.0/8, "
     "[::1]): a web page may not reach the MCP endpoint unless allowed."},
    {error_id::storage_full, 507, "RESOURCE_EXHAUSTED", "STORAGE_FULL", contentlake_domain,
     "The record store is full (LMDB's map, `storage.map_size_mib`): nothing of the write was stored; reads go on. "
     "The operator raises the setting and restarts; retrying before that fails the same way."},
    {error_id::fault_injection_disabled, 403, "PERMISSION_DENIED", "FAULT_INJECTION_DISABLED", contentlake_domain,
     "Admin listener only: fault injection is off; start the service with admin.fault_injection=true "
     "(CONTENTLAKE_ADMIN_FAULT_INJECTION=true) to use /faults."},
    {error_id::mcp_protocol_version_unsupported, 400, "INVALID_ARGUMENT", "MCP_PROTOCOL_VERSION_UNSUPPORTED",
     contentlake_domain, "`MCP-Protocol-Version` names a revision the MCP endpoint does not speak (2025-06-18, 2025-03-26)."},
    {error_id::upload_not_found, 404, "NOT_FOUND", "UPLOAD_NOT_FOUND", contentlake_domain,
     "No upload with this id was started by the caller in the token's tenant (uploads are their uploader's)."},
    {error_id::blob_not_found, 404, "NOT_FOUND", "BLOB_NOT_FOUND", contentlake_domain,
     "The blob has no committed version (yet), or not the version asked for."},
    {error_id::search_session_not_found, 404, "NOT_FOUND", "SEARCH_SESSION_NOT_FOUND", contentlake_domain,
     "No search session with this search_id belongs to the caller (sessions are their principal's and client's; "
     "they do not survive a restart or an eviction): start a new search."},
    {error_id::search_session_expired, 404, "NOT_FOUND", "SEARCH_SESSION_EXPIRED", contentlake_domain,
     "The search session was idle longer than search.session_ttl_seconds and is gone: start a new search."},
    {error_id::cursor_expired, 410, "OUT_OF_RANGE", "CURSOR_EXPIRED", contentlake_domain,
     "The change feed no longer holds what followed this cursor (past the change log's retention): list again and "
     "follow the feed from the list's `changes_cursor`."},
    {error_id::token_mismatch, 409, "ABORTED", "TOKEN_MISMATCH", contentlake_domain,
     "The update_token is stale: the Resource or contract changed since it was read; read it again and retry."},
    {error_id::idempotency_key_in_use, 409, "ABORTED", "IDEMPOTENCY_KEY_IN_USE", contentlake_domain,
     "A request with this Idempotency-Key is still executing; nothing was stored for this one, retry it."},
    {error_id::idempotency_key_mismatch, 422, "FAILED_PRECONDITION", "IDEMPOTENCY_KEY_MISMATCH", contentlake_domain,
     "This Idempotency-Key was used for a different request (method, path, query, body, caller or scopes) within "
     "the retention period; use a new key."},
    {error_id::upload_not_in_progress, 409, "FAILED_PRECONDITION", "UPLOAD_NOT_IN_PROGRESS", contentlake_domain,
     "The upload was aborted (DELETE, or expired and swept) or, for a DELETE, is already completed; start a new "
     "upload."},
    {error_id::method_not_allowed, 405, "METHOD_NOT_ALLOWED", "METHOD_NOT_ALLOWED",
     contentlake_domain, "The path exists but not with this method; `Allow` lists the methods."},
    {error_id::not_acceptable, 406, "INVALID_ARGUMENT", "NOT_ACCEPTABLE", contentlake_domain,
     "Nothing the `Accept` header or `format` allows can be produced; see the message for what can."},
    {error_id::unsupported_media_type, 415, "INVALID_ARGUMENT", "UNSUPPORTED_MEDIA_TYPE", contentlake_domain,
     "The request body is not `application/json`."},
    {error_id::rate_limited, 429, "RESOURCE_EXHAUSTED", "RATE_LIMITED", contentlake_domain,
     "The token's `client_id` is over its request quota; wait `Retry-After` seconds."},
    {error_id::too_many_held_requests, 429, "RESOURCE_EXHAUSTED", "TOO_MANY_HELD_REQUESTS", contentlake_domain,
     "The principal or the `client_id` already holds as many event streams and long polls of the change feed as "
     "allowed (`changes.max_held_per_principal`, `changes.max_held_per_client`); close one, or retry after "
     "`Retry-After`."},
    {error_id::backend_unavailable, 503, "UNAVAILABLE", "BACKEND_UNAVAILABLE", contentlake_domain,
     "An internal service did not answer in time, is restarting, or could not use its storage (the message says which); "
     "retry after `Retry-After`."},
    {error_id::search_index_rebuilding, 503, "UNAVAILABLE", "SEARCH_INDEX_REBUILDING", contentlake_domain,
     "The search index is being rebuilt from the stored Resources (after it was found missing, damaged or of an older "
     "format at start); everything else is served. Retry after `Retry-After`; `/readyz` says when search has caught up."},
    {error_id::position_not_reached, 503, "UNAVAILABLE", "POSITION_NOT_REACHED", contentlake_domain,
     "The Content-Lake-Position sent is past every change this deployment has committed (its database was "
     "restored from an older backup since): nothing can answer at or past it. Retry after `Retry-After`, or send "
     "the request without it."},
    {error_id::search_index_behind, 503, "UNAVAILABLE", "SEARCH_INDEX_BEHIND", contentlake_domain,
     "This node's search index has not yet applied the changes up to the position the request sent (or the position "
     "its search session started at) within the wait a search allows; retry after `Retry-After`."},
    {error_id::server_overloaded, 503, "UNAVAILABLE", "SERVER_OVERLOADED", contentlake_domain,
     "The connection limit is reached or the server is shutting down; retry after `Retry-After`."},
    {error_id::transfer_encoding_unsupported, 501, "UNIMPLEMENTED", "TRANSFER_ENCODING_UNSUPPORTED",
     contentlake_domain, "The request uses a `Transfer-Encoding` other than `chunked` (RFC 9112 6.1)."},
    {error_id::internal, 500, "INTERNAL", "INTERNAL", contentlake_domain,
     "An unexpected internal failure; the request id in `X-Request-Id` identifies it in logs."},
  };
  return rows;
}

const error_entry& entry(error_id id) {
  return catalogue().at(static_cast<std::size_t>(id));
}

std::string render_error_body(const api_error& err) {
  const auto& e = entry(err.id);
  std::string out;
  out.reserve(160 + err.message.size());
  out += R"({"error":{"code":)";
  append_json_string(out, e.code);
  out += R"(,"reason":)";
  append_json_string(out, e.reason);
  out += R"(,"domain":)";
  append_json_string(out, e.domain);
  out += R"(,"message":)";
  append_json_string(out, err.message.empty() ? e.when : std::string_view{err.message});
  out += R"(,"details":[)";
  bool first = true;
  for (const auto& d : err.details) {
    if (!first) out.push_back(',');
    first = false;
    out += R"({"field":)";
    append_json_string(out, d.field);
    out += R"(,"description":)";
    append_json_string(out, d.description);
    out.push_back('}');
  }
  out += "]}}";
  return out;
}

}  // namespace cl::domain
