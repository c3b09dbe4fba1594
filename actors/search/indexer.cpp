// The search index on several nodes (docs/architecture.md, "The search index on several nodes"):
//
// - **Position.** The index commits the last log sequence it applied in its own metadata, in the
//   same commit as the documents (`applied`): a restarted node resumes exactly there; a new node (an
//   empty data dir) rebuilds from the record store in the background (searches answer 503
//   `SEARCH_INDEX_REBUILDING` meanwhile) and then follows the log.
// - **Retention.** Each node's index is a change-log consumer of its own, `search-index@<node>`,
//   acknowledged every `acknowledge_every` (a quarter of the log's retention, at most a minute)
//   whether it moved or not. Retention never trims what a registered consumer has not applied. A node
//   that stops acknowledging for the log's retention (at least an hour) is let go by the others (its
//   consumer forgotten, a warning in their logs): a dead node does not hold the log forever. When it
//   comes back and the log no longer holds the changes after its index's position, it rebuilds at
//   start; a running index that finds such a gap says so once and waits for the restart.
// - **Sessions.** A search session is one row in PostgreSQL: its request, the position of the index
//   that opened it, and the hits it answered as an array, to which a page adds its own under the
//   row's lock (concurrent pages on two nodes never answer one hit twice). Its only index is the key,
//   so a page's update is a HOT one. The bounds (in all, per principal and client, held hits) are
//   applied by a sweep one node at a time runs at most 5 s apart (`search.session_ttl_seconds` / 2
//   when shorter), not by each open: a principal may hold more than its bound until the next sweep.
//   Each node's sweeper (`search_session_sweeper`, detached: the sweep reads every session) runs
//   it on a timer, never on a page's path. The opening INSERT commits without waiting for the WAL
//   flush (`synchronous_commit` off for its transaction alone): losing it in a database crash costs
//   the client a 404 on the next page, never a repeated hit, and every later write of the session
//   waits for its flush (and so flushes the open before it).

#include "actors/search/indexer.hpp"
#include "actors/fault_hooks.hpp"

#include "domain/clock.hpp"
#include "storage/change_log.hpp"
#include "storage/search/feed.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

namespace {

/// Lag in changes and in seconds (how old the oldest change not applied yet is).
void publish_lag(const indexer_config& cfg, std::uint64_t applied) {
  auto last = cfg.store->last_change();
  auto behind = last > applied ? last - applied : 0;
  double seconds = 0;
  if (behind > 0) {
    auto next = cfg.store->read_from(applied, 1);
    if (!next.empty()) seconds = std::max<double>(0, static_cast<double>(domain::now_ms() - next.front().at_ms) / 1000.0);
  }
  cfg.lag_changes.set(static_cast<double>(behind));
  cfg.lag_seconds.set(seconds);
  cfg.documents.set(static_cast<double>(cfg.index->documents()));
  if (cfg.caught_up && behind == 0) *cfg.caught_up = true;
}

/// Runs `work` on the configured lane (waiting for it), else here.
template <class Work>
auto on_lane(const indexer_config& cfg, Work work) -> decltype(work()) {
  return cfg.lane ? cfg.lane->run(std::move(work)) : work();
}

/// Every `acknowledge_every`, moved or not: writes this index's consumer position (retention keeps
/// what it has not applied; the time says the node is alive) and lets go the other nodes' indexes
/// that stopped saying so for `replica_lapse` (they no longer hold the log).
void acknowledge(indexer_actor::stateful_pointer<indexer_state> self, const indexer_config& cfg, std::uint64_t applied) {
  auto writer = cfg.directory ? cfg.directory->snapshot()->get<writer_actor>() : writer_actor{};
  auto now = std::chrono::steady_clock::now();
  if (!writer || now - self->state.acknowledged_at < cfg.acknowledge_every) return;
  self->state.acknowledged_at = now;
  auto write = [self, writer](storage::mutation m) {
    self->request(writer, std::chrono::seconds{30}, write_atom_v, std::move(m)).then([](bool) {}, [](caf::error&) {});
  };
  write(storage::acknowledge_changes(cfg.consumer, applied));
  auto prefix = replica_consumer("");
  auto lapsed_before = domain::now_ms() - cfg.replica_lapse.count();
  for (const auto& c : cfg.store->consumers())
    if (c.name != cfg.consumer && c.name.rfind(prefix, 0) == 0 && c.acknowledged_ms < lapsed_before) {
      spdlog::warn("search index: node {} has not said where its index is for {} s: let go (it no longer holds "
                   "the change log; back, it rebuilds its index when the log was trimmed past it)",
                   c.name.substr(prefix.size()), (domain::now_ms() - c.acknowledged_ms) / 1000);
      write(storage::forget_consumer(c.name));
    }
}

}  // namespace

indexer_actor::behavior_type indexer(indexer_actor::stateful_pointer<indexer_state> self,
                                     std::shared_ptr<const indexer_config> cfg) {
  accept_fault_delays(self);
  self->send(self, index_atom_v);
  return {
    [self, cfg](index_atom) {
      try {
        if (cfg->index->is_rebuilding()) {
          // A rebuild from the record store (started at start-up): one page per message, then the
          // next at once; searches wait for it (503), writes do not.
          auto step = on_lane(*cfg, [&] { return storage::rebuild_step(*cfg->index, *cfg->store, cfg->batch, cfg->batch_text_bytes); });
          publish_lag(*cfg, cfg->index->applied());
          if (!step.done) return self->send(self, index_atom_v);
          // Rebuilt: what changed meanwhile is applied at the next look, after the interval like
          // every look (searches are answered from the moment the rebuild is done, and a page at a
          // position the rebuild did not reach waits for that look: bounded by SEARCH_INDEX_BEHIND).
          spdlog::info("search index: rebuilt with {} Resources", cfg->index->documents());
          return self->delayed_send(self, cfg->interval, index_atom_v);
        }
        auto done = on_lane(*cfg, [&] { return storage::catch_up(*cfg->index, *cfg->store, cfg->batch, cfg->batch_text_bytes); });
        if (done.changes > 0)
          spdlog::debug("search index: applied {} changes ({} documents) up to {}", done.changes, done.documents,
                        done.applied);
        publish_lag(*cfg, done.applied);
        acknowledge(self, *cfg, done.applied);
        // Stopped at a bound: more is waiting, go again at once; otherwise look again after the interval.
        if (done.more) return self->send(self, index_atom_v);
      } catch (const storage::change_log_gap& e) {
        // Nothing to apply can close the gap: said once; the node's next start rebuilds the index.
        if (!self->state.gap_reported)
          spdlog::error("search index: {}; restart this node to rebuild its index from the record store", e.what());
        self->state.gap_reported = true;
      } catch (const std::exception& e) {
        spdlog::error("search index: applying changes failed: {}", e.what());
      }
      self->delayed_send(self, cfg->interval, index_atom_v);
    },
  };
}

}  // namespace cl::actors
