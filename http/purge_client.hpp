#pragma once
/// The HTTP client of edge purges (issue 29, part 3): one `PURGE` request to an edge cache the
/// operator configured (`edge.purge_urls`), carrying the keys to purge and the shared secret, and
/// whether the edge answered 200. The edges are the operator's own (loopback or a configured
/// network), so unlike webhook deliveries no address policy applies; plain `http` only (an edge
/// listens for purges beside its cache, deploy/edge/). Blocking: the purger runs it on its own thread.

#include <cstdint>
#include <string>
#include <variant>

namespace cl::http {

/// Where purges go: a parsed `http://host[:port][/path]` URL.
struct purge_target {
  std::string host;
  std::string port = "80";
  std::string target = "/";
};

/// The target of `url`, or why it is not one (https, user info, no host...).
std::variant<purge_target, std::string> parse_purge_url(const std::string& url);

struct purge_request {
  purge_target to;
  std::string secret;       ///< sent as `X-Purge-Secret`; never logged
  std::string hard_keys;    ///< `xkey-purge`: space-separated keys to remove (empty: none)
  std::string soft_keys;    ///< `xkey-softpurge`: keys to revalidate (empty: none)
  bool everything = false;  ///< `X-Purge-All: 1`: remove every cached answer
  std::int64_t timeout_ms = 5000;
};

/// What came of a purge: `error` empty when the edge answered 200; otherwise an error class
/// (`dns`, `connect`, `send`, `response`, `timeout`, `http_status`), never the secret or the keys.
struct purge_response {
  int status = 0;
  std::string error;
};

purge_response send_purge(const purge_request& r);

}  // namespace cl::http
