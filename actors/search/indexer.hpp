#pragma once
/// The search indexer (issue 14): keeps the Xapian index in step with LMDB, fed only from the
/// change log (storage/search/feed.hpp). Detached (Xapian commits fsync; the work itself runs on
/// the configured `lane`, this actor's thread waits for it). It looks for new change-log
/// entries every `interval` and applies at most `batch` of them (and `batch_text_bytes` of text) per
/// commit, so a burst of writes costs one index commit per interval, not one per write. Each node's
/// index is a registered change-log consumer of its own (`search-index@<node>`: entries it has not
/// applied are kept); it publishes its lag as metrics and whether it has caught up since start in
/// the service health (/readyz).

#include "actors/directory.hpp"
#include "actors/interfaces.hpp"
#include "actors/search/search_messages.hpp"
#include "actors/metrics.hpp"
#include "actors/work_lane.hpp"
#include "storage/stores.hpp"
#include "storage/search/feed.hpp"
#include "storage/search/index.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <memory>

namespace cl::actors {

/// The change-log consumer a node's search index registers under.
inline std::string replica_consumer(const std::string& node) { return "search-index@" + node; }
/// The consumer every node's index shared before each had its own: let go at start.
inline constexpr const char* shared_search_consumer = "search-index";

struct indexer_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<storage::search_index> index;
  std::shared_ptr<actor_directory> directory;  ///< where the writer is found (consumer position)
  /// The group's metrics (default: not published) and its /readyz check (null: none).
  metrics::gauge lag_changes, lag_seconds, documents;
  std::shared_ptr<std::atomic<bool>> caught_up;
  /// Where the indexing itself runs (a thread that keeps its priority when the service lowers its
  /// other threads, and outlives this actor's restarts); null: on the actor's own thread.
  std::shared_ptr<work_lane> lane;
  std::size_t batch = storage::default_batch_changes;                ///< change-log entries per commit at most
  std::size_t batch_text_bytes = storage::default_batch_text_bytes;  ///< text per commit at most
  std::chrono::milliseconds interval{100};
  /// How often the consumer position is written (a write of its own; the log keeps at most this
  /// much more than the index needs), moved or not: a node that is gone stops saying it.
  std::chrono::milliseconds acknowledge_every{60000};
  /// This index's consumer name (`replica_consumer`).
  std::string consumer = replica_consumer("local");
  /// Another node's index not acknowledged for this long is let go (its consumer forgotten: it no
  /// longer holds the log); back, that node rebuilds its index if the log has been trimmed past it.
  std::chrono::milliseconds replica_lapse{std::chrono::hours{1}};
};

struct indexer_state {
  static constexpr const char* name = "indexer";
  /// When the consumer position was last written (at start: the search group registered it).
  std::chrono::steady_clock::time_point acknowledged_at = std::chrono::steady_clock::now();
  bool gap_reported = false;  ///< the change log was trimmed past the index: said once
};

indexer_actor::behavior_type indexer(indexer_actor::stateful_pointer<indexer_state> self,
                                     std::shared_ptr<const indexer_config> cfg);

}  // namespace cl::actors
