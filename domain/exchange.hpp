#pragma once
/// A request and its reply as plain values: what the HTTP layer hands to the coordinator and
/// what comes back. No Beast, no CAF; the HTTP layer maps them to and from the wire.

#include "domain/errors.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::domain {

/// The parts of an HTTP request that handlers may look at.
struct api_request {
  std::string method;         ///< upper case, e.g. GET
  std::string path;           ///< without the query
  std::string query;          ///< without the '?'
  std::string authorization;  ///< raw header value; never logged
  std::string accept;
  std::string if_none_match;
  std::string content_type;
  std::string idempotency_key;    ///< `Idempotency-Key` (spec 4.6)
  bool has_idempotency_key = false;  ///< the header was sent (possibly empty)
  /// `X-Usage-Purpose`: a declared AI use of the content (docs/rights.md); nullopt when not sent.
  std::optional<std::string> usage_purpose;
  std::string request_id;     ///< validated or generated
  std::string last_event_id;  ///< `Last-Event-ID` (an event stream's resumption)
  std::string position;       ///< `Content-Lake-Position`: answer from state at or past it (read your writes)
  std::string host;           ///< `Host` (the MCP resource metadata's URL when none is configured)
  std::string origin;         ///< `Origin` (checked by the MCP endpoint: DNS rebinding)
  std::string mcp_protocol_version;  ///< `MCP-Protocol-Version`
  std::string body;
  /// Set (from the connection's thread) once the client closed its connection while the request
  /// was in flight: a request held open (an event stream, a long poll) ends then. Null: unknown.
  std::shared_ptr<const std::atomic<bool>> peer_gone;
};

/// One answer. When `error` is set, the HTTP layer renders it from the catalogue (status,
/// code, reason, domain) and ignores `status`, `content_type` and `body`.
struct api_reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<api_error> error;
  int retry_after_seconds = 0;  ///< > 0 adds `Retry-After`
  std::string tenant;           ///< for the access log
  std::string client_id;        ///< for the access log
  std::string route;            ///< route template, for the access log and metrics
  /// When set, the body is streamed with chunked transfer: each call returns the next chunk,
  /// nullopt at the end. Called on the connection's I/O thread; `body` is then ignored.
  std::function<std::optional<std::string>()> next_chunk;
  /// The same, asynchronous: each call asks for the next chunk, which the source hands to the
  /// callback once, from any thread, when it has it (an event stream waits for events); nullopt
  /// ends the body. Asked for again only after the chunk before was written.
  std::function<void(std::function<void(std::optional<std::string>)>)> next_chunk_async;

  /// A reply that is `error`.
  static api_reply from(api_error error) {
    api_reply r;
    r.error = std::move(error);
    return r;
  }

  /// A reply that is the error `id` with `message`.
  static api_reply failure(error_id id, std::string message = {}, std::vector<error_detail> details = {}) {
    api_reply r;
    r.error = api_error{id, std::move(message), std::move(details)};
    return r;
  }
};

/// The HTTP status an answer goes out with.
inline int status_of(const api_reply& r) {
  return r.error ? entry(r.error->id).http_status : r.status;
}

}  // namespace cl::domain
