#pragma once
// A tiny HTTPS server on 127.0.0.1 that serves a JWKS document, with a self-signed certificate it
// makes itself; counts the fetches. For testing `auth.jwks_url`.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace cl::testing {

class jwks_server {
public:
  /// Starts serving `jwks` on an ephemeral port; writes the CA (its own cert) to `ca_path`.
  jwks_server(std::string jwks, const std::string& ca_path);
  ~jwks_server();

  unsigned short port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/.well-known/jwks.json"; }

  /// Replaces the served document.
  void set_jwks(std::string jwks);

  /// JWKS requests answered so far.
  int fetches() const { return fetches_; }

private:
  struct impl;
  std::unique_ptr<impl> impl_;
  unsigned short port_ = 0;
  std::atomic<int> fetches_{0};
};

}  // namespace cl::testing
