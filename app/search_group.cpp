// Route group: search (spec 4.5.3). Two actors: the indexer keeps the Xapian index under
// <data_dir>/search in step with the change log (`contentlake reindex` rebuilds it); the search
// session actor holds the sessions and runs their queries (on PostgreSQL, with a sweeper of the
// shared sessions beside them). POST /v0/content-lake/search.

#include "actors/search/indexer.hpp"
#include "actors/search/search_plans.hpp"
#include "actors/search/search_session.hpp"
#include "actors/work_lane.hpp"
#include "app/groups.hpp"
#include "storage/backend.hpp"
#include "storage/search/feed.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

namespace cl::app {

namespace {

/// Search session workers per directory view where the session store is PostgreSQL: a page waits on
/// two or three round trips, during which the others run (docs/benchmarks.md: one-word searches, 8
/// clients, 100,000 documents, 386 and 603 req/s against 313 and 363 with one actor per view).
constexpr std::size_t blocking_session_workers = 4;

struct search_settings {
  std::int64_t batch_max_changes = storage::default_batch_changes;
  std::int64_t batch_max_bytes = storage::default_batch_text_bytes;
  std::int64_t batch_interval_ms = 100;
  std::int64_t session_ttl_seconds = 600;
  std::int64_t max_sessions = 10000;
  std::int64_t max_sessions_per_principal = 100;
  std::int64_t max_session_hits = 10000;
  std::int64_t max_held_hits = 1000000;
  std::int64_t indexer_priority = 5;
};

/// Starts rebuilding the index at `dir` from the record store: an empty index the indexer fills
/// page by page while the service serves (search answers 503 SEARCH_INDEX_REBUILDING until it is
/// done). The index's own copy of what it replaces is removed first: it is derived data.
std::shared_ptr<storage::search_index> start_rebuild(const std::filesystem::path& dir, const storage::record_store& store,
                                                     const std::string& why) {
  spdlog::warn("search index: {}; rebuilding it from the record store in the background (search answers 503 "
               "SEARCH_INDEX_REBUILDING until it is done)",
               why);
  std::filesystem::remove_all(dir);
  auto index = std::make_shared<storage::search_index>(dir);
  index->begin_rebuild(store.last_change());
  return index;
}

/// The index under the data dir. A missing, unreadable or older one is rebuilt from the record
/// store, in the background; so is one ahead of the store (a data dir restored from an older
/// backup), and one behind what the change log still holds (a node away longer than retention,
/// let go by the others). A rebuild a stop interrupted goes on where it was. One another process
/// holds (its write lock) stops the start instead.
std::shared_ptr<storage::search_index> open_index(const std::string& data_dir, const storage::record_store& store) {
  auto dir = std::filesystem::path{data_dir} / "search";
  bool missing = !std::filesystem::exists(dir) || std::filesystem::is_empty(dir);
  // Catching up from the change log would miss what retention has trimmed: rebuild from the store.
  if (missing && store.last_change() > 0) return start_rebuild(dir, store, dir.string() + " is missing");
  std::shared_ptr<storage::search_index> index;
  try {
    index = std::make_shared<storage::search_index>(dir);
  } catch (const std::exception& e) {
    // Locked is not damaged: some other process writes it (the data dir's lock keeps out another
    // contentlake). Rebuilding would remove its files under it: the start stops instead.
    if (storage::search_index::in_use(dir))
      throw std::runtime_error(dir.string() + " is in use by another process (its write lock is held)");
    return start_rebuild(dir, store, e.what());
  }
  if (index->applied() > store.last_change()) {
    auto why = "ahead of the record store (" + std::to_string(index->applied()) + " > " + std::to_string(store.last_change()) + ")";
    index.reset();  // its write locks go before its files
    return start_rebuild(dir, store, why);
  }
  if (!index->is_rebuilding() && !storage::log_continues_after(store, index->applied())) {
    auto why = "behind the change log, which no longer holds the changes after " + std::to_string(index->applied());
    index.reset();
    return start_rebuild(dir, store, why);
  }
  if (index->is_rebuilding())
    spdlog::warn("search index: resuming its rebuild from the record store (search answers 503 SEARCH_INDEX_REBUILDING "
                 "until it is done)");
  return index;
}

/// The index's gauges: its lag, documents, bytes on disk and filter cache.
void declare_index_metrics(const startup& s, actors::indexer_config& cfg) {
  if (!s.stats) return;
  cfg.lag_changes = s.stats->declare_gauge("contentlake_search_index_lag_changes",
                                            "Change-log entries committed but not yet applied to the search index.");
  cfg.lag_seconds = s.stats->declare_gauge(
    "contentlake_search_index_lag_seconds",
    "Age of the oldest change-log entry not yet applied to the search index (0 when caught up).");
  cfg.documents = s.stats->declare_gauge("contentlake_search_index_documents", "Resources in the search index.");
  // A handful of files per shard: walking them at each scrape costs the same whatever the index holds.
  auto bytes = s.stats->declare_gauge("contentlake_search_index_bytes", "Bytes of the search index's files on disk.");
  s.stats->on_render([bytes, dir = std::filesystem::path{s.settings.data_dir} / "search"] {
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator{dir, ec};
         !ec && it != std::filesystem::recursive_directory_iterator{}; it.increment(ec))
      if (it->is_regular_file(ec)) total += it->file_size(ec);
    bytes.set(static_cast<double>(total));
  });
  auto filters = s.stats->declare_gauge("contentlake_search_filter_cache_bytes",
                                        "Bytes of the filter sets held for searches (at most 64 MiB).");
  s.stats->on_render([filters, index = std::weak_ptr<storage::search_index>(cfg.index)] {
    if (auto i = index.lock()) filters.set(static_cast<double>(i->filter_cache_bytes()));
  });
}

/// The indexer's configuration: its index opened, its lane, its change-log consumer registered.
caf::expected<std::shared_ptr<actors::indexer_config>> indexer_setup(const startup& s, const search_settings& section) {
  auto cfg = std::make_shared<actors::indexer_config>();
  cfg->store = s.store;
  try {
    cfg->index = open_index(s.settings.data_dir, *s.store);
  } catch (const std::exception& e) {
    return startup_failure(std::string{"search index: "} + e.what());
  }
  cfg->directory = s.directory;
  declare_index_metrics(s, *cfg);
  // Reported, not required: a service whose index still catches up serves everything else.
  if (s.health) cfg->caught_up = s.health->declare_check("search_index_caught_up", false);
  cfg->batch = static_cast<std::size_t>(section.batch_max_changes);
  cfg->batch_text_bytes = static_cast<std::size_t>(section.batch_max_bytes);
  cfg->interval = std::chrono::milliseconds{section.batch_interval_ms};
  // The index's position goes to the change log once a minute, or four times per retention when
  // that is shorter (retention never waits long for the index).
  cfg->acknowledge_every = std::clamp<std::chrono::milliseconds>(
    std::chrono::seconds{s.settings.storage.change_log_retention_seconds} / 4, std::chrono::milliseconds{100},
    std::chrono::seconds{60});
  // The indexing runs on a lane of its own, created here (before anything is lowered) and kept across
  // the indexer's restarts. Under a write burst on a busy CPU the indexer would otherwise get one
  // share among many threads and fall behind the writes (docs/operations.md).
  cfg->lane = std::make_shared<actors::work_lane>("cl-indexer");
  if (s.owns_process && section.indexer_priority > 0) {
    auto lowered = actors::lower_other_threads(static_cast<int>(section.indexer_priority));
    spdlog::info("search indexer: the service's other threads run {} nice steps below it ({} lowered)",
                 section.indexer_priority, lowered);
  }
  // Registered as a change-log consumer of its own before anything is served (retention then keeps
  // what this node's index has not applied); later positions are written by the indexer through
  // the writer. The consumer all nodes' indexes once shared goes.
  cfg->consumer = actors::replica_consumer(s.node);
  std::vector<storage::mutation> registration{storage::acknowledge_changes(cfg->consumer, cfg->index->applied())};
  for (const auto& c : s.store->consumers())
    if (c.name == actors::shared_search_consumer) registration.push_back(storage::forget_consumer(c.name));
  s.store->apply(std::move(registration));
  // Another node's index is let go after the change log's retention (at least an hour): until then,
  // a node that comes back finds the log where its index stopped.
  cfg->replica_lapse = std::max<std::chrono::milliseconds>(std::chrono::seconds{s.settings.storage.change_log_retention_seconds},
                                                           std::chrono::hours{1});
  return cfg;
}

/// The session actors' configuration: the limits and the session store the backend opens.
caf::expected<std::shared_ptr<actors::search_session_config>> session_setup(const startup& s, const search_settings& section,
                                                                            std::shared_ptr<storage::search_index> index) {
  auto sessions = std::make_shared<actors::search_session_config>();
  sessions->index = std::move(index);
  sessions->store = s.store;
  sessions->limits.ttl_ms = section.session_ttl_seconds * 1000;
  sessions->limits.max_sessions = static_cast<std::size_t>(section.max_sessions);
  sessions->limits.max_per_principal = static_cast<std::size_t>(section.max_sessions_per_principal);
  sessions->limits.max_returned = static_cast<std::size_t>(section.max_session_hits);
  sessions->limits.max_held_hits = static_cast<std::size_t>(section.max_held_hits);
  bool blocking = s.backend->traits().reads_block;
  try {
    // A connection per session actor that may wait on it, and one for the sweeper.
    sessions->sessions = s.backend->open_session_store(sessions->limits,
                                            s.directory->readers() * (blocking ? blocking_session_workers : 1) + 1);
  } catch (const std::exception& e) {
    return startup_failure(std::string{"search sessions: "} + e.what());
  }
  if (s.stats) {
    auto open = s.stats->declare_gauge("contentlake_search_sessions",
                                       "Search sessions held (at most search.max_sessions; on PostgreSQL, every "
                                       "node's, as of the last sweep).");
    s.stats->on_render([open, held = std::weak_ptr<domain::session_store>(sessions->sessions)] {
      if (auto store = held.lock()) open.set(static_cast<double>(store->size()));
    });
  }
  return sessions;
}

caf::expected<std::vector<actors::child_spec>> spawn_search(const startup& s) {
  if (!s.store) return startup_failure("the indexer needs the record store");
  auto section = s.settings.groups.get<search_settings>();
  auto cfg = indexer_setup(s, section);
  if (!cfg) return cfg.error();
  auto sessions = session_setup(s, section, (*cfg)->index);
  if (!sessions) return sessions.error();
  bool blocking = s.backend->traits().reads_block;
  std::shared_ptr<const actors::indexer_config> shared = *cfg;
  std::shared_ptr<const actors::search_session_config> session_cfg = *sessions;
  std::vector<actors::child_spec> children{actors::supervised<actors::indexer_actor>(
    "indexer", [shared](caf::actor_system& sys) { return sys.spawn<caf::detached>(actors::indexer, shared); })};
  // One session actor per directory view (as many as readers): queries run in parallel on the
  // scheduler's threads (CPU work, like the readers' LMDB reads). The sessions they share survive
  // the restart of an actor; in memory (LMDB) not the service's (then 404), on PostgreSQL they do,
  // and continue on any node. On PostgreSQL a page's session and grant reads are round trips that
  // block the actor's thread: there each view's actor is a front for `blocking_session_workers`
  // detached workers (a thread each), so pages wait on the database side by side while the
  // scheduler's threads serve other requests.
  for (std::size_t i = 0; i < s.directory->readers(); ++i)
    children.push_back(actors::supervised<actors::search_session_actor>(
      "search-session",
      [session_cfg, blocking](caf::actor_system& sys) {
        if (!blocking) return sys.spawn(actors::search_session, session_cfg);
        std::vector<actors::search_session_actor> workers;
        for (std::size_t w = 0; w < blocking_session_workers; ++w)
          workers.push_back(sys.spawn<caf::detached>(actors::search_session, session_cfg));
        return sys.spawn(actors::search_session_front, std::move(workers));
      },
      i));
  // A shared store's sweep reads every session: on a thread of its own, never on a page's path.
  if ((*sessions)->sessions->sweep_every_ms() > 0) {
    auto sweeper = std::make_shared<actors::search_sweeper_config>();
    sweeper->sessions = (*sessions)->sessions;
    if (s.stats)
      sweeper->sweeps = s.stats->declare_counter(
        "contentlake_search_session_sweeps_total",
        "Sweeps of the shared search sessions this node started (PostgreSQL: every few seconds; each forgets "
        "long idle sessions and applies the bounds; one that finds another node's under way skips it).");
    if (s.stats)
      sweeper->vacuums = s.stats->declare_counter(
        "contentlake_search_session_vacuums_total",
        "Sweeps of this node that also vacuumed the shared search sessions' table (PostgreSQL: once its sweeps "
        "removed as many sessions as it holds live ones, at least 2,000).");
    std::shared_ptr<const actors::search_sweeper_config> fixed = sweeper;
    children.push_back(actors::supervised<actors::search_sweeper_actor>(
      "search-sweeper",
      [fixed](caf::actor_system& sys) { return sys.spawn<caf::detached>(actors::search_session_sweeper, fixed); }));
  }
  return children;
}

}  // namespace

void register_search(registry& r) {
  r.add_routes({
    {"POST", "/v0/content-lake/search", "content-lake.read", &actors::plan_search, nullptr},
  });
  r.add_options({
    {"search.batch_max_changes", "2000", "Change-log entries the indexer applies per index commit at most.",
     config::integer_member(&search_settings::batch_max_changes, 1, 100000)},
    {"search.batch_max_bytes", "67108864",
     "Text (titles and texts) the indexer holds per index commit at most, unless one Resource alone is larger.",
     config::integer_member(&search_settings::batch_max_bytes, 1, std::int64_t{1} << 40)},
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
    {"search.indexer_priority", "5",
     "Nice steps the service's other threads run below the indexer's (`contentlake serve`); 0: equal shares.",
     config::integer_member(&search_settings::indexer_priority, 0, 19)},
  });
  r.add_actors("search", &spawn_search);
}

}  // namespace cl::app
