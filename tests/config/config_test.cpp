#include "tests/support/paths.hpp"
#include "app/access_group.hpp"
#include "app/groups.hpp"
#include "config/settings.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace cl::config;

namespace {

std::string write_temp(const std::string& text) {
  static int counter = 0;
  auto path = std::filesystem::temp_directory_path() / ("contentlake-config-test-" + std::to_string(::getpid()) + "-"
                                                        + std::to_string(++counter) + ".json");
  std::ofstream{path} << text;
  return path.string();
}

std::optional<settings> load(const std::string& file, std::vector<std::pair<std::string, std::string>> env = {},
                             std::vector<std::pair<std::string, std::string>> flags = {}, std::string* err = nullptr) {
  std::string error;
  auto s = load_settings(cl::app::groups().options(), file, env, flags, error);
  if (err) *err = error;
  return s;
}

}  // namespace

TEST_CASE("embedded defaults match the issue's defaults", "[config]") {
  auto s = load("");
  REQUIRE(s);
  CHECK(s->listen.host == "127.0.0.1");
  CHECK(s->listen.port == 8080);
  CHECK(s->data_dir == "./var");
  CHECK(s->admin_listen.port == 9464);
  CHECK(s->http.body_limit_bytes == 10 * 1024 * 1024);
  CHECK(s->http.header_limit_bytes == 16 * 1024);
  CHECK(s->supervisor.max_restarts == 5);
  CHECK(s->supervisor.window_seconds == 10);
  CHECK(s->development_identity());
}

TEST_CASE("file < environment < flags", "[config]") {
  auto file = write_temp(R"({"listen": "127.0.0.1:1000", "http": {"threads": 3}, "rate_limit": {"burst": 9}})");
  auto s = load(file, {{"CONTENTLAKE_LISTEN", "127.0.0.1:2000"}, {"CONTENTLAKE_HTTP_THREADS", "4"}, {"PATH", "/bin"}},
                {{"listen", "127.0.0.1:3000"}});
  REQUIRE(s);
  CHECK(s->listen.port == 3000);
  CHECK(s->http.threads == 4);
  CHECK(s->rate_limit.burst == 9);
  std::remove(file.c_str());
}

TEST_CASE("the public listener runs half the cores' event loops unless http.threads says how many", "[config]") {
  auto s = load("");
  REQUIRE(s);
  CHECK(s->http.threads == 0);
  CHECK(s->http.io_threads == 2);
  CHECK(s->http.event_loops(1) == 1);
  CHECK(s->http.event_loops(2) == 1);
  CHECK(s->http.event_loops(3) == 1);
  CHECK(s->http.event_loops(16) == 8);
  CHECK(s->http.event_loops() >= 1);
  auto set = load("", {{"CONTENTLAKE_HTTP_THREADS", "3"}, {"CONTENTLAKE_HTTP_IO_THREADS", "5"}});
  REQUIRE(set);
  CHECK(set->http.event_loops(2) == 3);
  CHECK(set->http.io_threads == 5);
  std::string err;
  CHECK_FALSE(load("", {{"CONTENTLAKE_HTTP_IO_THREADS", "0"}}, {}, &err));
  CHECK(err.find("http.io_threads") != std::string::npos);
}

TEST_CASE("dotted keys map to CONTENTLAKE_ environment names", "[config]") {
  auto s = load("", {{"CONTENTLAKE_AUTH_JWKS_FILE", "/etc/jwks.json"}, {"CONTENTLAKE_AUTH_ISSUER", "https://id.example"}});
  REQUIRE(s);
  CHECK(s->auth.jwks_file == "/etc/jwks.json");
  CHECK_FALSE(s->development_identity());
  bool found = false;
  for (const auto& o : documented_options(cl::app::groups().options()))
    if (o.key == "auth.jwks_file") found = o.env == "CONTENTLAKE_AUTH_JWKS_FILE";
  CHECK(found);
}

TEST_CASE("unknown keys stop start-up with a message naming the key", "[config]") {
  std::string err;
  auto file = write_temp(R"({"http": {"thread": 2}})");
  CHECK_FALSE(load(file, {}, {}, &err));
  CHECK(err.find("http.thread") != std::string::npos);
  CHECK_FALSE(load("", {{"CONTENTLAKE_LISTNE", "x"}}, {}, &err));
  CHECK(err.find("CONTENTLAKE_LISTNE") != std::string::npos);
  std::remove(file.c_str());
}

TEST_CASE("bad values stop start-up with a message naming the key", "[config]") {
  std::string err;
  CHECK_FALSE(load("", {{"CONTENTLAKE_HTTP_THREADS", "many"}}, {}, &err));
  CHECK(err.find("http.threads") != std::string::npos);
  CHECK_FALSE(load("", {}, {{"listen", "localhost"}}, &err));
  CHECK(err.find("listen") != std::string::npos);
  CHECK_FALSE(load("", {{"CONTENTLAKE_LOG_LEVEL", "loud"}}, {}, &err));
  CHECK(err.find("log.level") != std::string::npos);
  CHECK_FALSE(load("", {{"CONTENTLAKE_AUTH_JWKS_URL", "http://insecure"}, {"CONTENTLAKE_AUTH_ISSUER", "x"}}, {}, &err));
  CHECK(err.find("auth.jwks_url") != std::string::npos);
  CHECK_FALSE(load("", {{"CONTENTLAKE_AUTH_ISSUER", "https://id.example"}}, {}, &err));
  CHECK(err.find("auth.issuer") != std::string::npos);
  auto file = write_temp(R"({"http": {"threads": [1]}})");
  CHECK_FALSE(load(file, {}, {}, &err));
  CHECK(err.find("http.threads") != std::string::npos);
  std::remove(file.c_str());
  auto broken = write_temp("{not json");
  CHECK_FALSE(load(broken, {}, {}, &err));
  CHECK(err.find(broken) != std::string::npos);
  std::remove(broken.c_str());
}

TEST_CASE("endpoints parse as HOST:PORT and [v6]:PORT", "[config]") {
  CHECK(parse_endpoint("127.0.0.1:0")->port == 0);
  CHECK(parse_endpoint("[::1]:8080")->host == "::1");
  CHECK_FALSE(parse_endpoint("127.0.0.1"));
  CHECK_FALSE(parse_endpoint("127.0.0.1:70000"));
  CHECK_FALSE(parse_endpoint(":80"));
}

TEST_CASE("docs/operations.md documents every key and its environment name", "[config][docs]") {
  std::ifstream in{cl::testing::source_dir() + "/docs/operations.md"};
  REQUIRE(in);
  std::string doc{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  for (const auto& o : documented_options(cl::app::groups().options())) {
    INFO(o.key);
    CHECK(doc.find("`" + o.key + "`") != std::string::npos);
    CHECK(doc.find("`" + o.env + "`") != std::string::npos);
  }
}

TEST_CASE("the shipped example config loads", "[config]") {
  std::string err;
  auto s = load(cl::testing::source_dir() + "/config/contentlake.example.json", {}, {}, &err);
  INFO(err);
  REQUIRE(s);
  CHECK(s->auth.jwks_url == "https://id.example.com/.well-known/jwks.json");
  CHECK_FALSE(s->development_identity());
}

TEST_CASE("relative paths in a config file are read from its folder; from the environment, from the working directory",
          "[config]") {
  auto file = write_temp(R"({"data_dir": "var", "rights": {"policy_file": "../p.json"}, "access": {"directory_file": "/abs/g.json"}})");
  auto folder = std::filesystem::path{file}.parent_path();
  std::string error;
  auto s = load(file, {{"CONTENTLAKE_AUTH_JWKS_CA_FILE", "rel/ca.pem"}}, {}, &error);
  INFO(error);
  REQUIRE(s);
  CHECK(s->data_dir == (folder / "var").string());
  CHECK(s->rights.policy_file == (folder / "../p.json").lexically_normal().string());
  CHECK(s->groups.get<cl::app::access_settings>().directory_file == "/abs/g.json");
  CHECK(s->auth.jwks_ca_file == "rel/ca.pem");
  // What was configured must exist at start (it replaced the defaults of its keys).
  CHECK(s->configured_files.size() == 3);
  CHECK(missing_configured_file(*s) == "rights.policy_file: " + (folder / "../p.json").lexically_normal().string());
  std::remove(file.c_str());
}

TEST_CASE("a default policy or group directory must be there too, unless the configuration says none", "[config]") {
  // The defaults, from the working directory: a service started elsewhere (systemd's state
  // directory) must not run on the built-in policy and no groups without saying so.
  auto defaults = load("");
  REQUIRE(defaults);
  CHECK(defaults->configured_files == std::vector<std::pair<std::string, std::string>>{
                                        {"rights.policy_file", "config/policy.json"},
                                        {"access.directory_file", "config/directory.json"}});
  auto here = std::filesystem::current_path();
  std::filesystem::current_path(cl::testing::source_dir());  // the checkout has both
  CHECK_FALSE(missing_configured_file(*defaults));
  std::filesystem::current_path(std::filesystem::temp_directory_path());  // elsewhere, neither
  CHECK(missing_configured_file(*defaults)
        == "rights.policy_file: " + (std::filesystem::temp_directory_path() / "config/policy.json").string());
  std::filesystem::current_path(here);
  // "" says there is none: nothing to look for.
  auto none = load("", {{"CONTENTLAKE_RIGHTS_POLICY_FILE", ""}, {"CONTENTLAKE_ACCESS_DIRECTORY_FILE", ""}});
  REQUIRE(none);
  CHECK(none->configured_files.empty());
  CHECK_FALSE(missing_configured_file(*none));
}
