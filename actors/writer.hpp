#pragma once
/// The writer actor: every mutation of the record store goes through it. Mutations that arrive
/// while a commit is in progress are committed together: one transaction, one fsync.

#include "actors/interfaces.hpp"
#include "actors/metrics.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace cl::storage {
class lease_keeper;
}

namespace cl::actors {

/// Validated configuration of the writer.
struct writer_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<writer_stats> stats;
  bool group_commit = true;  ///< false: one transaction (and fsync) per mutation
  /// Change-log entries older than this are removed once every registered consumer has applied
  /// them; checked every `change_log_prune_interval`, on a timer of the pruning writer's own
  /// (whether or not writes reach it: of several lanes, writes may all go to others).
  std::chrono::milliseconds change_log_retention{std::chrono::hours{24 * 7}};
  std::chrono::milliseconds change_log_prune_interval{std::chrono::seconds{60}};
  bool prunes = true;  ///< this writer prunes the change log (of several lanes, one does)
  /// Pruning runs only while this node holds the `pruning` lease (null: always, one node).
  std::shared_ptr<const storage::lease_keeper> leases{};
};

struct writer_state {
  static constexpr const char* name = "writer";
  std::vector<std::pair<storage::mutation, caf::typed_response_promise<bool>>> pending;
  bool flush_scheduled = false;
};

/// The writer's behavior; spawn it detached.
writer_actor::behavior_type writer(writer_actor::stateful_pointer<writer_state> self,
                                   std::shared_ptr<const writer_config> cfg);

/// Several writers ("lanes", each its own group commit) behind one handle, for a store that
/// commits several transactions at once (PostgreSQL). A write goes to its sender's lane, which
/// answers it: one actor's writes keep the order it sent them in; writes of different senders
/// never had one. Linked to its lanes: when one dies, all do, and the supervisor restarts them.
writer_actor::behavior_type writer_lanes(writer_actor::pointer self, std::vector<writer_actor> lanes);

}  // namespace cl::actors
