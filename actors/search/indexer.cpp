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
          if (step.done) spdlog::info("search index: rebuilt with {} Resources", cfg->index->documents());
          return self->send(self, index_atom_v);
        }
        auto done = on_lane(*cfg, [&] { return storage::catch_up(*cfg->index, *cfg->store, cfg->batch, cfg->batch_text_bytes); });
        if (done.changes > 0)
          spdlog::debug("search index: applied {} changes ({} documents) up to {}", done.changes, done.documents,
                        done.applied);
        publish_lag(*cfg, done.applied);
        // The consumer position follows the index (retention keeps what the index has not applied).
        auto writer = cfg->directory ? cfg->directory->snapshot()->get<writer_actor>() : writer_actor{};
        auto now = std::chrono::steady_clock::now();
        if (writer && done.applied > self->state.acknowledged && now - self->state.acknowledged_at >= cfg->acknowledge_every) {
          self->state.acknowledged = done.applied;
          self->state.acknowledged_at = now;
          self->request(writer, std::chrono::seconds{30}, write_atom_v,
                        storage::acknowledge_changes(search_consumer, done.applied))
            .then([](bool) {}, [](caf::error&) {});
        }
        // Stopped at a bound: more is waiting, go again at once; otherwise look again after the interval.
        if (done.more) return self->send(self, index_atom_v);
      } catch (const std::exception& e) {
        spdlog::error("search index: applying changes failed: {}", e.what());
      }
      self->delayed_send(self, cfg->interval, index_atom_v);
    },
  };
}

}  // namespace cl::actors
