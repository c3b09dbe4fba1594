// The kinds of backend failure an operator can tell apart, and the metric that counts them.

#include "actors/backend_error.hpp"
#include "actors/metrics.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

using namespace cl::actors;

TEST_CASE("errors from concern actors are classified by kind", "[backend_error]") {
  CHECK(classify(caf::make_error(backend_error::storage_failure, "x")) == backend_error::storage_failure);
  CHECK(classify(caf::make_error(backend_error::refused)) == backend_error::refused);
  CHECK(classify(caf::make_error(caf::sec::request_timeout)) == backend_error::timeout);
  CHECK(classify(caf::make_error(caf::sec::request_receiver_down)) == backend_error::gone);
  CHECK(classify(caf::make_error(caf::sec::unexpected_message)) == backend_error::other);
  CHECK(backend_error_name(backend_error::gone) == "gone");
}

TEST_CASE("backend failures are counted by concern and kind", "[backend_error][metrics]") {
  metrics m;
  // Every series is there from the start, at 0.
  auto fresh = m.render();
  for (auto concern : backend_concerns)
    for (auto kind : backend_error_kinds) {
      auto series = "contentlake_backend_errors_total{concern=\"" + std::string{concern} + "\",kind=\""
                    + std::string{backend_error_name(kind)} + "\"} 0";
      INFO(series);
      CHECK(fresh.find(series) != std::string::npos);
    }
  m.count_backend_error("record reader", "storage_failure");
  m.count_backend_error("record reader", "storage_failure");
  m.count_backend_error("access", "gone");
  auto text = m.render();
  CHECK(text.find(R"(contentlake_backend_errors_total{concern="record reader",kind="storage_failure"} 2)") != std::string::npos);
  CHECK(text.find(R"(contentlake_backend_errors_total{concern="access",kind="gone"} 1)") != std::string::npos);
}
