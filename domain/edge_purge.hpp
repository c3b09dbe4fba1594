#pragma once
/// Edge purges (issue 29, part 3) as values: where a purge goes (an edge the operator configured in
/// `edge.purge_urls`), what it carries (the keys to purge, the shared secret) and what came of it.
/// The edge purger (actors/) decides what to purge; the HTTP client that sends one (http/purge_client)
/// is handed to it by app/, so the dependency runs one way.

#include <cstdint>
#include <string>
#include <variant>

namespace cl::domain {

/// Where purges go: a parsed `http://host[:port][/path]` URL.
struct purge_target {
  std::string host;
  std::string port = "80";
  std::string target = "/";
};

/// The target of `url`, or why it is not one (https, user info, no host...).
std::variant<purge_target, std::string> parse_purge_url(const std::string& url);

/// One purge to one edge.
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

}  // namespace cl::domain
