// Route group: search (spec 4.5.3). Two actors: the indexer keeps the Xapian index under
// <data_dir>/search in step with the change log (`contentlake reindex` rebuilds it); the search
// session actor holds the sessions and runs their queries. POST /v0/content-lake/search.

#include "actors/indexer.hpp"
#include "actors/search_plans.hpp"
#include "actors/search_session.hpp"
#include "app/groups.hpp"
#include "storage/search_feed.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>

namespace cl::app {

namespace {

struct search_settings {
  std::int64_t batch_max_changes = 500;
  std::int64_t batch_interval_ms = 100;
  std::int64_t session_ttl_seconds = 600;
  std::int64_t max_sessions = 10000;
  std::int64_t max_sessions_per_principal = 100;
  std::int64_t max_session_hits = 10000;
  std::int64_t max_held_hits = 1000000;
};

/// The index under the data dir; an unreadable one is rebuilt from the record store.
std::shared_ptr<storage::search_index> open_index(const std::string& data_dir, const storage::record_store& store) {
  auto dir = std::filesystem::path{data_dir} / "search";
  bool missing = !std::filesystem::exists(dir) || std::filesystem::is_empty(dir);
  if (missing && store.last_change() > 0) {
    // Catching up from the change log would miss what retention has trimmed: rebuild from the store.
    spdlog::warn("search index: {} is missing; rebuilding it from the record store", dir.string());
    auto done = storage::rebuild_index(dir, store);
    spdlog::info("search index: rebuilt with {} Resources", done.documents);
  }
  try {
    return std::make_shared<storage::search_index>(dir);
  } catch (const std::exception& e) {
    spdlog::warn("search index: {}; rebuilding it from the record store", e.what());
    auto done = storage::rebuild_index(dir, store);
    spdlog::info("search index: rebuilt with {} Resources", done.documents);
    return std::make_shared<storage::search_index>(dir);
  }
}

caf::expected<std::vector<actors::child_spec>> spawn_search(const startup& s) {
  if (!s.store) return startup_failure("the indexer needs the record store");
  auto section = s.settings.groups.get<search_settings>();
  auto cfg = std::make_shared<actors::indexer_config>();
  cfg->store = s.store;
  try {
    cfg->index = open_index(s.settings.data_dir, *s.store);
  } catch (const std::exception& e) {
    return startup_failure(std::string{"search index: "} + e.what());
  }
  cfg->directory = s.directory;
  cfg->stats = s.stats;
  cfg->health = s.health;
  cfg->batch = static_cast<std::size_t>(section.batch_max_changes);
  cfg->interval = std::chrono::milliseconds{section.batch_interval_ms};
  if (cfg->index->applied() > s.store->last_change()) {
    // An index ahead of the store (a data dir restored from an older backup): start it afresh.
    spdlog::warn("search index: ahead of the record store ({} > {}); rebuilding it", cfg->index->applied(),
                 s.store->last_change());
    cfg->index.reset();
    storage::rebuild_index(std::filesystem::path{s.settings.data_dir} / "search", *s.store);
    cfg->index = open_index(s.settings.data_dir, *s.store);
  }
  // Registered as a change-log consumer before anything is served (retention then keeps what the
  // index has not applied); later positions are written by the indexer through the writer.
  bool registered = false;
  for (const auto& [name, seq] : s.store->consumers()) registered = registered || name == actors::search_consumer;
  if (!registered) s.store->apply({storage::acknowledge_changes(actors::search_consumer, cfg->index->applied())});
  auto sessions = std::make_shared<actors::search_session_config>();
  sessions->index = cfg->index;
  sessions->store = s.store;
  sessions->limits.ttl_ms = section.session_ttl_seconds * 1000;
  sessions->limits.max_sessions = static_cast<std::size_t>(section.max_sessions);
  sessions->limits.max_per_principal = static_cast<std::size_t>(section.max_sessions_per_principal);
  sessions->limits.max_returned = static_cast<std::size_t>(section.max_session_hits);
  sessions->limits.max_held_hits = static_cast<std::size_t>(section.max_held_hits);
  sessions->sessions = std::make_shared<actors::shared_sessions>();
  sessions->sessions->store = std::make_unique<domain::memory_session_store>(sessions->limits);
  std::shared_ptr<const actors::indexer_config> shared = cfg;
  std::shared_ptr<const actors::search_session_config> session_cfg = sessions;
  std::vector<actors::child_spec> children{actors::supervised<actors::indexer_actor>(
    "indexer", [shared](caf::actor_system& sys) { return sys.spawn<caf::detached>(actors::indexer, shared); })};
  // One session actor per directory view (as many as readers): queries run in parallel on the
  // scheduler's threads (CPU work, like the readers' LMDB reads). The sessions they share live in
  // memory: they survive the restart of an actor, not the service's (then 404).
  for (std::size_t i = 0; i < s.directory->readers(); ++i)
    children.push_back(actors::supervised<actors::search_session_actor>(
      "search-session",
      [session_cfg](caf::actor_system& sys) { return sys.spawn(actors::search_session, session_cfg); }, i));
  return children;
}

}  // namespace

void register_search(registry& r) {
  r.add_routes({
    {"POST", "/v0/content-lake/search", "content-lake.read", &actors::plan_search, nullptr},
  });
  r.add_options({
    {"search.batch_max_changes", "500", "Change-log entries the indexer applies per index commit at most.",
     config::integer_member(&search_settings::batch_max_changes, 1, 100000)},
    {"search.batch_interval_ms", "100",
     "How often the indexer looks for new changes: a write is searchable within about this (plus one commit).",
     config::integer_member(&search_settings::batch_interval_ms, 1, 60000)},
    {"search.session_ttl_seconds", "600",
     "A search session idle this long is gone (its next page: 404 SEARCH_SESSION_EXPIRED).",
     config::integer_member(&search_settings::session_ttl_seconds, 1, 7 * 24 * 3600)},
    {"search.max_sessions", "10000", "Search sessions kept in all; past it the least recently used is evicted.",
     config::integer_member(&search_settings::max_sessions, 1, 10000000)},
    {"search.max_sessions_per_principal", "100",
     "Search sessions kept per principal and client; past it that caller's least recently used is evicted.",
     config::integer_member(&search_settings::max_sessions_per_principal, 1, 100000)},
    {"search.max_session_hits", "10000", "Hits one search session answers at most; then it is exhausted.",
     config::integer_member(&search_settings::max_session_hits, 1, 1000000)},
    {"search.max_held_hits", "1000000",
     "Answered hits remembered over all sessions (about 100 bytes each); past it least recently used sessions go.",
     config::integer_member(&search_settings::max_held_hits, 1000, 100000000)},
  });
  r.add_actors("search", &spawn_search);
}

}  // namespace cl::app
