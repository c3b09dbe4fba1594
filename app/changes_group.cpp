// Route group: changes (issue 29, part 1): the change feed. One actor, the feed, reads the change
// log for a caller at a time; its cursors are sealed with a key of its own in the data dir.
// GET /v0/content-lake/changes.

#include "actors/events/changes_feed.hpp"
#include "actors/events/changes_plans.hpp"
#include "actors/metrics.hpp"
#include "app/groups.hpp"
#include "actors/ticker.hpp"
#include "storage/backend.hpp"
#include "storage/identity.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>

namespace cl::app {

namespace {

struct changes_settings {
  std::int64_t scan_limit = 1000;
  std::int64_t max_waiting = 10000;
  std::int64_t stream_seconds = 300;
  std::int64_t max_held_per_principal = 10;
  std::int64_t max_held_per_client = 100;
  std::int64_t max_held = 512;
};

caf::expected<std::vector<actors::child_spec>> spawn_changes(const startup& s) {
  if (!s.store) return startup_failure("the change feed needs the record store");
  auto cfg = std::make_shared<actors::changes_feed_config>();
  cfg->store = s.store;
  cfg->health = s.health;
  cfg->policy = s.directory->snapshot()->policy;
  const auto& section = s.settings.groups.get<changes_settings>();
  cfg->scan_limit = static_cast<std::size_t>(section.scan_limit);
  cfg->max_waiting = static_cast<std::size_t>(section.max_waiting);
  cfg->stream_ms = section.stream_seconds * 1000;

  try {
    cfg->cursors = storage::feed_codec(secrets_of(s.settings), s.store->deployment_id());
  } catch (const std::exception& e) {
    return startup_failure(std::string{"change feed: "} + e.what());
  }
  if (s.stats) {
    cfg->scanned = s.stats->declare_counter("contentlake_changes_scanned_total",
                                            "Change-log entries polls of the change feed have read.");
    cfg->delivered = s.stats->declare_counter("contentlake_changes_events_total",
                                              "Events polls of the change feed have answered.");
    cfg->waiting = s.stats->declare_gauge("contentlake_changes_waiting_polls",
                                          "Long polls of the change feed waiting for a change.");
  }
  actors::metrics::gauge held;
  if (s.stats)
    held = s.stats->declare_gauge("contentlake_changes_held_requests",
                                  "Event streams and long polls of the change feed held open.");
  // Held requests keep at most half the connections, so ordinary requests always find room.
  auto room = static_cast<std::size_t>(std::max(1, s.settings.http.max_connections / 2));
  // On a backend several nodes share, the per-principal and per-client limits are counted in it:
  // they hold across nodes (the total stays per node: it guards this node's connections).
  std::shared_ptr<storage::held_slot_store> counted_by_all;
  try {
    counted_by_all = s.backend->open_held_slots(s.node);
  } catch (const std::exception& e) {
    return startup_failure(std::string{"change feed: "} + e.what());
  }
  // Their upkeep (slots given back leave every node's count, live ones kept alive) is a supervised
  // ticker: while it is away, given-back slots still count on the other nodes until their lifetime
  // (30 s) runs out: the limits are stricter for that while, never looser.
  std::optional<actors::child_spec> upkeep;
  if (counted_by_all && s.backend->traits().shared)
    upkeep = actors::supervised_ticker("held-slots", [slots = counted_by_all] { return slots->keep(); });
  cfg->holds = std::make_shared<actors::held_requests>(
    actors::held_limits{static_cast<std::size_t>(section.max_held_per_principal),
                        static_cast<std::size_t>(section.max_held_per_client),
                        std::min(static_cast<std::size_t>(section.max_held), room)},
    held, std::move(counted_by_all));
  std::shared_ptr<const actors::changes_feed_config> shared = cfg;
  // On a backend whose reads block (PostgreSQL), the feed's reads of the change log are round trips:
  // a thread of its own, never a scheduler thread.
  std::vector<actors::child_spec> out{actors::supervised<actors::changes_actor>(
    "changes-feed", [shared, blocking = s.backend->traits().reads_block](caf::actor_system& sys) {
      return spawn_reading(sys, blocking, actors::changes_feed, shared);
    })};
  if (upkeep) out.push_back(std::move(*upkeep));
  return out;
}

}  // namespace

void register_changes(registry& r) {
  r.add_routes({
    // A long poll waits up to 30 s for a change: its deadline leaves it room.
    // Reads Accept itself: JSON, or an event stream.
    {"GET", "/v0/content-lake/changes", "content-lake.read", &actors::plan_changes, nullptr, std::chrono::seconds{35},
     true},
  });
  r.add_options({
    {"changes.scan_limit", "1000",
     "Change-log entries one poll of the change feed reads at most (whatever it answers: its cost is bounded by "
     "this, not by the tenant).",
     config::integer_member(&changes_settings::scan_limit, 1, 100000)},
    {"changes.max_waiting", "10000",
     "Long polls (`wait`) of the change feed held at once; past it a poll answers at once, as without `wait`.",
     config::integer_member(&changes_settings::max_waiting, 0, 1000000)},
    {"changes.max_held_per_principal", "10",
     "Event streams and long polls of the change feed one principal (a tenant's subject) may hold open at once (on "
     "all nodes together, on PostgreSQL); past it 429 TOO_MANY_HELD_REQUESTS with Retry-After.",
     config::integer_member(&changes_settings::max_held_per_principal, 1, 100000)},
    {"changes.max_held_per_client", "100",
     "The same per client_id (an application acting for many users); past it 429 TOO_MANY_HELD_REQUESTS.",
     config::integer_member(&changes_settings::max_held_per_client, 1, 100000)},
    {"changes.max_held", "512",
     "Event streams and long polls held open in all, at most half of http.max_connections (the rest stays for "
     "ordinary requests); past it 503 SERVER_OVERLOADED with Retry-After.",
     config::integer_member(&changes_settings::max_held, 1, 1000000)},
    {"changes.stream_seconds", "300",
     "How long an event stream (`Accept: text/event-stream`) lasts; then it ends and its client reconnects with "
     "`Last-Event-ID`.",
     config::integer_member(&changes_settings::stream_seconds, 1, 86400)},
  });
  r.add_actors("changes", &spawn_changes);
}

}  // namespace cl::app
