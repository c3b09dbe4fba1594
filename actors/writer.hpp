#pragma once
/// The writer actor: every mutation of the record store goes through it. Mutations that arrive
/// while a commit is in progress are committed together: one transaction, one fsync.

#include "actors/interfaces.hpp"
#include "actors/metrics.hpp"
#include "storage/record_store.hpp"

#include <caf/stateful_actor.hpp>

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

namespace cl::actors {

/// Validated configuration of the writer.
struct writer_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<writer_stats> stats;
  bool group_commit = true;  ///< false: one transaction (and fsync) per mutation
};

struct writer_state {
  static constexpr const char* name = "writer";
  std::vector<std::pair<storage::mutation, caf::typed_response_promise<bool>>> pending;
  bool flush_scheduled = false;
};

/// The writer's behavior; spawn it detached.
writer_actor::behavior_type writer(writer_actor::stateful_pointer<writer_state> self,
                                   std::shared_ptr<const writer_config> cfg);

}  // namespace cl::actors
