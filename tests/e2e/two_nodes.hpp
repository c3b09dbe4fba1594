#pragma once
// Two services on one PostgreSQL database and one secrets file, in one process (issue 42): what
// one node hands out, the other continues.

#include "storage/identity.hpp"
#include "storage/postgresql/postgresql_store.hpp"
#include "tests/support/service_fixture.hpp"

#include <functional>
#include <string>

namespace cl::testing {

/// Two nodes on one database and one secrets file; `both` changes both nodes' settings further
/// (after the fixture's), `b_also` B's alone.
struct two_nodes {
  temp_dir dir;
  std::string secrets = dir.path + "/cluster.secrets";
  bool written = (cl::storage::write_secrets_file(secrets), true);
  std::function<void(cl::config::settings&)> b_also;
  std::function<void(cl::config::settings&)> both;
  test_service a{[this](cl::config::settings& s) { node(s); }};
  test_service b{[this](cl::config::settings& s) {
    node(s);
    s.groups.get<cl::storage::postgresql_section>().url = a.postgresql_url();
    if (b_also) b_also(s);
  }};

  explicit two_nodes(std::function<void(cl::config::settings&)> b_also_ = {},
                     std::function<void(cl::config::settings&)> both_ = {})
    : b_also(std::move(b_also_)), both(std::move(both_)) {}

  void node(cl::config::settings& s) const {
    s.secrets_file = secrets;
    s.rate_limit.burst = 100000;
    set_option(s, "search.batch_interval_ms", "20");
    if (both) both(s);
  }
};

}  // namespace cl::testing
