#pragma once
// Runs the whole service in-process on ephemeral loopback ports with a temporary data dir and
// the test signing key, for end-to-end tests over real sockets.

#include "config/settings.hpp"
#include "app/service.hpp"

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

namespace cl::testing {

/// A fresh temporary directory, removed with the object.
struct temp_dir {
  temp_dir();
  ~temp_dir();
  std::string path;
};

class test_service {
public:
  /// Starts the service; `tweak` may change settings first (limits, quotas, timeouts). In the
  /// PostgreSQL run a `tweak` that sets `storage.postgresql.url` (another service's) makes this one
  /// a second node on the same database.
  explicit test_service(const std::function<void(config::settings&)>& tweak = {});
  ~test_service();

  unsigned short port() const { return static_cast<unsigned short>(svc_->port()); }
  unsigned short admin_port() const { return static_cast<unsigned short>(svc_->admin_port()); }
  app::service& service() { return *svc_; }
  const std::string& jwks_path() const { return jwks_path_; }
  /// The data dir the service runs on.
  const std::string& data_dir() const { return data_dir_; }
  /// In the PostgreSQL run, the connection string of the service's records (empty on LMDB).
  const std::string& postgresql_url() const { return postgresql_url_; }

  /// Asks for a graceful stop and waits (bounded) for `run` to return; its exit code, or -1.
  int stop_and_wait(int timeout_ms = 20000);

  /// Waits (bounded) for `run` to return by itself, e.g. when the supervisor gives up.
  std::optional<int> wait_exit(int timeout_ms);

private:
  temp_dir dir_;
  std::string jwks_path_;
  std::string data_dir_;
  std::string postgresql_url_;
  std::unique_ptr<app::service> svc_;
  std::future<int> exit_;
  bool stopped_ = false;
};

/// Sets, for its lifetime, the environment a `contentlake` command needs to open the records of a
/// service that ran with `postgresql_url` (nothing when it is empty: LMDB in the data dir).
class storage_environment {
public:
  explicit storage_environment(const std::string& postgresql_url);
  ~storage_environment();

private:
  bool set_ = false;
};

/// Sets option `key` as a configuration file would (a route group's section is its own business).
/// Throws std::runtime_error for an unknown key or a value the option refuses.
void set_option(config::settings& s, const std::string& key, const std::string& value);

/// A well-formed token from the test issuer for tenant t_test with these scopes.
std::string read_token(const std::string& scopes = "content-lake.read");

}  // namespace cl::testing
