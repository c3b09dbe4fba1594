// The change feed's reading of the change log (actors/events/changes_feed.hpp), on either record store
// backend: a cursor past retention is 410 CURSOR_EXPIRED, a cursor survives a new codec on the same
// secret (a restart), the scan bound holds.

#include "actors/events/changes_feed.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

using namespace cl;

namespace {

storage::mutation created(const std::string& tenant, const std::string& id, std::int64_t at_ms) {
  return [=](storage::write_txn& tx) {
    storage::change_entry e;
    e.tenant = tenant;
    e.kind = storage::change_kind::work;
    e.id = id;
    e.at_ms = at_ms;
    tx.log_change(e);
    return true;
  };
}

actors::changes_poll poll_of(std::string since, std::vector<std::string> types = {}) {
  actors::changes_poll p;
  p.tenant = "t1";
  p.principals = {"u_a"};
  p.types = std::move(types);
  p.since = std::move(since);
  return p;
}

}  // namespace

TEST_CASE("the feed answers events from a cursor, bounded by its scan, and 410 past retention", "[changes]") {
  testing::temp_dir dir;
  actors::changes_feed_config cfg;
  cfg.store = testing::open_store(dir.path);
  cfg.cursors = std::make_shared<const domain::feed_cursor_codec>(std::string(32, 's'));
  cfg.scan_limit = 3;
  auto start = actors::read_changes(cfg, poll_of(""));
  REQUIRE_FALSE(start.error);
  CHECK(start.events.empty());
  for (int i = 0; i < 4; ++i) cfg.store->apply({created("t1", "wk_" + std::to_string(i), 1000 + i)});
  cfg.store->apply({created("t2", "wk_other", 2000)});
  auto first = actors::read_changes(cfg, poll_of(start.next_cursor));
  REQUIRE_FALSE(first.error);
  REQUIRE(first.events.size() == 3);  // the scan bound
  CHECK(first.events[0].type == "work.created");
  CHECK(first.events[0].subject_id == "wk_0");
  auto second = actors::read_changes(cfg, poll_of(first.next_cursor));
  REQUIRE(second.events.size() == 1);  // wk_3; t2's entry is not the caller's
  CHECK(second.events[0].subject_id == "wk_3");
  // Another codec on the same secret (a restart) opens the cursor.
  actors::changes_feed_config restarted = cfg;
  restarted.cursors = std::make_shared<const domain::feed_cursor_codec>(std::string(32, 's'));
  CHECK(actors::read_changes(restarted, poll_of(second.next_cursor)).events.empty());
  CHECK_FALSE(actors::read_changes(restarted, poll_of(second.next_cursor)).error);
  // Retention trims what followed `start`'s cursor: 410.
  cfg.store->apply({created("t1", "wk_4", 3000)});
  cfg.store->apply({storage::prune_changes(2500, 1000)});
  auto expired = actors::read_changes(cfg, poll_of(start.next_cursor));
  REQUIRE(expired.error);
  CHECK(expired.error->id == domain::error_id::cursor_expired);
  // A cursor whose successor is still held reads on.
  auto kept = actors::read_changes(cfg, poll_of(second.next_cursor));
  REQUIRE_FALSE(kept.error);
  REQUIRE(kept.events.size() == 1);
  CHECK(kept.events[0].subject_id == "wk_4");
}
