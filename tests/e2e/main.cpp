#define CATCH_CONFIG_RUNNER
#include "tests/e2e/log_capture.hpp"

#include <catch2/catch.hpp>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace {

/// `dir`/`name`-<pid>.log: this process's own file.
std::string run_log(const char* dir, const char* name) {
  return std::string{dir} + "/" + name + "-" + std::to_string(::getpid()) + ".log";
}

}  // namespace

int main(int argc, char** argv) {
  // The console shows errors only (warnings such as each service's missing policy file would bury a
  // failing assertion in CI output). With CL_TEST_LOG_DIR (ctest sets it), every line at debug and
  // above also goes to e2e-<pid>.log there, which ctest's log_secrets greps for tokens and keys, and
  // for outbound connections beyond loopback (logged at debug). A file per process: ctest runs the
  // suite once per backend, at the same time (one shared file was truncated and torn mid-line).
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  console->set_level(spdlog::level::err);
  std::vector<spdlog::sink_ptr> sinks{console};
  std::shared_ptr<spdlog::sinks::basic_file_sink_mt> file;
  if (const char* dir = std::getenv("CL_TEST_LOG_DIR")) {
    std::filesystem::create_directories(dir);
    file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(run_log(dir, "e2e"), true);
    file->set_level(spdlog::level::debug);
    sinks.push_back(file);
  }
  auto ops = std::make_shared<spdlog::logger>("e2e", sinks.begin(), sinks.end());
  ops->set_level(file ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(ops);
  // Access-log lines are captured so tests can check what reaches the log.
  std::vector<spdlog::sink_ptr> access_sinks{cl::testing::access_log()};
  if (const char* dir = std::getenv("CL_TEST_LOG_DIR"))  // a file of its own: the pattern below is the sink's
    access_sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(run_log(dir, "e2e-access"), true));
  auto access = std::make_shared<spdlog::logger>("access", access_sinks.begin(), access_sinks.end());
  access->set_pattern("%v");
  access->set_level(spdlog::level::info);
  spdlog::register_logger(access);
  return Catch::Session().run(argc, argv);
}
