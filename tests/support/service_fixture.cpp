#include "tests/support/service_fixture.hpp"

#include "app/blobs_group.hpp"
#include "app/groups.hpp"

#include "tests/support/test_keys.hpp"
#include "tests/support/test_store.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

namespace cl::testing {

temp_dir::temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "contentlake-test-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path = tmpl;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

test_service::test_service(const std::function<void(config::settings&)>& tweak) {
  jwks_path_ = dir_.path + "/jwks.json";
  std::ofstream{jwks_path_} << test_key().jwks_json(test_kid());
  config::settings s;
  s.listen = {"127.0.0.1", 0};
  s.admin_listen = {"127.0.0.1", 0};
  s.groups.get<app::blobs_settings>().embedded_listen = {"127.0.0.1", 0};
  s.data_dir = dir_.path + "/data";
  s.auth.issuer = test_issuer;
  s.auth.jwks_file = jwks_path_;
  s.http.shutdown_grace_seconds = 5;
  if (tweak) tweak(s);
  if (postgresql_backend() && !s.groups.get<cl::storage::postgresql_section>().url.empty()) {
    // A node of several on another's database (`tweak` named it).
    s.storage.backend = "postgresql";
    postgresql_url_ = s.groups.get<cl::storage::postgresql_section>().url;
  } else if (postgresql_backend()) {
    // The PostgreSQL run (e2e_pg): a schema of its own per data dir, so a service started again on
    // the same data dir finds its records, as on LMDB.
    static std::mutex mutex;
    static std::map<std::string, std::string> schema_of_dir;
    std::lock_guard<std::mutex> guard{mutex};
    auto& url = schema_of_dir[s.data_dir];
    if (url.empty()) url = fresh_postgresql_url();
    s.storage.backend = "postgresql";
    s.groups.get<cl::storage::postgresql_section>().url = url;
    postgresql_url_ = url;
  }
  data_dir_ = s.data_dir;
  svc_ = std::make_unique<app::service>(s);
  svc_->start(false);
  exit_ = std::async(std::launch::async, [this] { return svc_->run(); });
}

void set_option(config::settings& s, const std::string& key, const std::string& value) {
  for (const auto& o : app::groups().options())
    if (o.key == key) {
      if (auto refused = o.set(s, value)) throw std::runtime_error("option " + key + ": " + *refused);
      return;
    }
  throw std::runtime_error("no option " + key);
}

storage_environment::storage_environment(const std::string& postgresql_url) : set_(!postgresql_url.empty()) {
  if (!set_) return;
  ::setenv("CONTENTLAKE_STORAGE_BACKEND", "postgresql", 1);
  ::setenv("CONTENTLAKE_STORAGE_POSTGRESQL_URL", postgresql_url.c_str(), 1);
}

storage_environment::~storage_environment() {
  if (!set_) return;
  ::unsetenv("CONTENTLAKE_STORAGE_BACKEND");
  ::unsetenv("CONTENTLAKE_STORAGE_POSTGRESQL_URL");
}

test_service::~test_service() {
  if (!stopped_) stop_and_wait();
}

std::optional<int> test_service::wait_exit(int timeout_ms) {
  if (exit_.wait_for(std::chrono::milliseconds{timeout_ms}) != std::future_status::ready) return std::nullopt;
  stopped_ = true;
  return exit_.get();
}

int test_service::stop_and_wait(int timeout_ms) {
  if (stopped_) return -1;
  svc_->stop();
  auto code = wait_exit(timeout_ms);
  if (!code) std::abort();  // a service that cannot stop would hang the whole test run
  return *code;
}

std::string read_token(const std::string& scopes) {
  return token_with(scopes);
}

}  // namespace cl::testing
