// Route group: changes (issue 29, part 1): the change feed. One actor, the feed, reads the change
// log for a caller at a time; its cursors are sealed with a key of its own in the data dir.
// GET /v0/content-lake/changes.

#include "actors/changes_feed.hpp"
#include "actors/changes_plans.hpp"
#include "actors/metrics.hpp"
#include "app/groups.hpp"
#include "storage/identity.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace cl::app {

namespace {

struct changes_settings {
  std::int64_t scan_limit = 1000;
};

caf::expected<std::vector<actors::child_spec>> spawn_changes(const startup& s) {
  if (!s.store) return startup_failure("the change feed needs the record store");
  auto cfg = std::make_shared<actors::changes_feed_config>();
  cfg->store = s.store;
  cfg->scan_limit = static_cast<std::size_t>(s.settings.groups.get<changes_settings>().scan_limit);
  try {
    cfg->cursors = std::make_shared<const domain::feed_cursor_codec>(
      storage::load_or_create_secret(s.settings.data_dir, "feed-cursor.key"));
  } catch (const std::exception& e) {
    return startup_failure(std::string{"change feed: "} + e.what());
  }
  if (s.stats) {
    cfg->scanned = s.stats->declare_counter("contentlake_changes_scanned_total",
                                            "Change-log entries polls of the change feed have read.");
    cfg->delivered = s.stats->declare_counter("contentlake_changes_events_total",
                                              "Events polls of the change feed have answered.");
  }
  std::shared_ptr<const actors::changes_feed_config> shared = cfg;
  return std::vector<actors::child_spec>{actors::supervised<actors::changes_actor>(
    "changes-feed", [shared](caf::actor_system& sys) { return sys.spawn(actors::changes_feed, shared); })};
}

}  // namespace

void register_changes(registry& r) {
  r.add_routes({
    {"GET", "/v0/content-lake/changes", "content-lake.read", &actors::plan_changes, nullptr},
  });
  r.add_options({
    {"changes.scan_limit", "1000",
     "Change-log entries one poll of the change feed reads at most (whatever it answers: its cost is bounded by "
     "this, not by the tenant).",
     config::integer_member(&changes_settings::scan_limit, 1, 100000)},
  });
  r.add_actors("changes", &spawn_changes);
}

}  // namespace cl::app
