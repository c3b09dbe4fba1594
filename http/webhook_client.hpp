#pragma once
/// The HTTP client of webhook deliveries (issue 29, part 2; connections kept, issue 43). It
/// resolves the target's name, keeps only the addresses the policy allows
/// (domain::address_allowed: no loopback, private, link-local, ... unless allowlisted) and connects
/// to one of those, so a name that changes its answer between check and connect (DNS rebinding)
/// still reaches only a checked address. A connection whose answer allowed it is kept for the next
/// delivery to the same origin (scheme, host, port) for at most `keep_alive` after its name was
/// resolved, and at most `idle` unused: past that the name is resolved and checked again. Redirects
/// are not followed; an answer's body is read (up to 64 KiB, so the connection can be reused) and
/// dropped. Blocking and thread-safe: the dispatcher's workers call it, one delivery each at a time.

#include "domain/webhook.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cl::http {

struct webhook_client_options {
  bool https_only = true;
  std::vector<domain::ip_network> allowed_networks;  ///< the operator's allowlist
  std::string ca_file;                               ///< extra CAs to trust (tests); system CAs always
  std::string user_agent = "contentlake-webhooks";
  /// How long a kept connection is used after its name was resolved (0: a connection per attempt).
  std::chrono::milliseconds keep_alive{30000};
  /// How long a kept connection may wait unused (receivers close idle connections after a few seconds).
  std::chrono::milliseconds idle{4000};
  std::size_t max_idle = 64;  ///< kept connections waiting, at most (the oldest unused goes first)
};

class webhook_client {
public:
  explicit webhook_client(webhook_client_options options);
  ~webhook_client();
  webhook_client(const webhook_client&) = delete;
  webhook_client& operator=(const webhook_client&) = delete;

  /// POSTs `r` and says what came of it; never throws (an error class instead), never puts the
  /// signature, the body or the URL's query in its error.
  domain::webhook_response post(const domain::webhook_request& r);

  /// Connections made since the start (a kept connection's reuse makes none): for tests and metrics.
  std::size_t connections_made() const;

  struct connection;

private:
  std::unique_ptr<connection> take(const std::string& origin);
  void give_back(std::unique_ptr<connection> c);

  webhook_client_options options_;
  struct tls_context;
  std::unique_ptr<tls_context> tls_;  ///< one TLS client context (the CA store read once)
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<connection>> idle_;  ///< kept connections, oldest unused first
  std::size_t made_ = 0;
};

}  // namespace cl::http
