// The sweeper of the shared search sessions (PostgreSQL): it applies the bounds on its own, off
// the pages' path, so a principal past its bound loses its least recently used session without a
// page of anyone's to run the sweep.

#include "actors/search/search_session.hpp"
#include "domain/clock.hpp"
#include "domain/ids.hpp"
#include "storage/postgresql/search_sessions.hpp"
#include "tests/support/test_store.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

using namespace cl;

TEST_CASE("the sweeper applies a shared store's bounds at once, then every few seconds",
          "[search][sessions][postgresql]") {
  domain::session_limits limits;
  limits.max_per_principal = 2;
  storage::postgresql_settings pg{testing::fresh_postgresql_url(), {}, 2};
  storage::open_postgresql_store(pg);  // migrates the schema
  auto cfg = std::make_shared<actors::search_sweeper_config>();
  cfg->sessions = storage::open_postgresql_sessions(pg, limits, 2);
  CHECK(cfg->sessions->sweep_every_ms() == 5000);  // half the default TTL of 600 s, at most 5 s
  const domain::session_owner alice{"t_a", "u_alice", "a_app"};
  auto now = domain::now_ms();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(domain::random_id("srch_"));
    cfg->sessions->opened(ids.back(), alice, {"tides", {}, {}, {}, false}, 0, {"res_" + std::to_string(i)}, now - 3 + i);
  }
  caf::actor_system_config config;
  caf::actor_system sys{config};
  auto sweeper = sys.spawn<caf::detached>(actors::search_session_sweeper,
                                          std::shared_ptr<const actors::search_sweeper_config>{cfg});
  // The sweep counts the live sessions it leaves: two, the bound.
  CHECK(testing::eventually([&] { return cfg->sessions->size() == 2; }));
  CHECK_FALSE(cfg->sessions->find(ids[0], alice, now).session);
  CHECK(cfg->sessions->find(ids[1], alice, now).session);
  CHECK(cfg->sessions->find(ids[2], alice, now).session);
  caf::anon_send_exit(sweeper, caf::exit_reason::user_shutdown);
}
