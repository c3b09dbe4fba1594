#pragma once
/// Internal to http/listener.cpp (Beast inside): an `api_reply` as the HTTP answer a session
/// writes: the error shape or the body, the reply's headers, `Retry-After`, `X-Request-Id`, a
/// 401's challenge; a HEAD's answer (the GET's headers and length, no body); a streamed answer's
/// header (chunked).

#include "domain/exchange.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <memory>
#include <optional>
#include <string>

namespace cl::http {

class resource_metadata;

namespace answers {

using whole_answer = boost::beast::http::response<boost::beast::http::string_body>;
using header_answer = boost::beast::http::response<boost::beast::http::empty_body>;

/// What every answer of one request carries besides its reply.
struct framing {
  unsigned version = 11;
  bool keep_alive = true;
  std::string_view request_id;
};

/// Adds to a 401 `r` its `WWW-Authenticate` challenge (RFC 6750; `max_age` for AUTH_STALE; the
/// protected resource metadata URL of RFC 9728 for `host`, when `metadata` names one).
void add_challenge(domain::api_reply& r, std::int64_t recent_sign_in_seconds, const resource_metadata* metadata,
                   const std::string& host);

/// The whole answer of `r` (its body moved out).
std::shared_ptr<whole_answer> whole(domain::api_reply& r, int status, const framing& f);

/// A whole answer as bytes: its header block and its body, written together in one gather write
/// (writev). The header is written by hand, not by Beast's fields and serializer: the status line
/// from a table made once, then each line appended, byte for byte what `whole` would serialize
/// (tests/http/answers_test.cpp compares them).
struct answer_bytes {
  std::string header;
  std::string body;
};

/// The bytes of `whole(r, status, f)`, its body moved out of `r`; nullopt where this writer does
/// not know what Beast would do, so the caller uses `whole`: the reply sets `Connection`,
/// `Content-Length` or `Transfer-Encoding` itself, an HTTP version other than 1.0 and 1.1, or a body
/// on a status that may carry none.
std::optional<answer_bytes> whole_bytes(domain::api_reply& r, int status, const framing& f);

/// A HEAD's answer: the GET's status and headers, `Content-Length` of the body it would have.
std::shared_ptr<header_answer> head(const domain::api_reply& r, int status, const framing& f);

/// The header of a streamed answer (chunked; its body follows chunk by chunk).
std::shared_ptr<header_answer> stream_header(const domain::api_reply& r, const framing& f);

}  // namespace answers
}  // namespace cl::http
