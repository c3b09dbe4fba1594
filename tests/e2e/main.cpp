#define CATCH_CONFIG_RUNNER
#include "tests/e2e/log_capture.hpp"

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  // Access-log lines are captured so tests can check what reaches the log.
  auto access = std::make_shared<spdlog::logger>("access", cl::testing::access_log());
  access->set_pattern("%v");
  spdlog::register_logger(access);
  spdlog::set_level(spdlog::level::err);  // warnings (a missing policy file per service) would bury a failure in CI output
  access->set_level(spdlog::level::info);
  return Catch::Session().run(argc, argv);
}
