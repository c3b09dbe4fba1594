#include "tests/support/service_fixture.hpp"

#include "app/blobs_group.hpp"

#include "tests/support/test_keys.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  data_dir_ = s.data_dir;
  svc_ = std::make_unique<app::service>(s);
  svc_->start(false);
  exit_ = std::async(std::launch::async, [this] { return svc_->run(); });
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
