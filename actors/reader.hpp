#pragma once
/// The reader actor: reads records of every table of the record store. LMDB read transactions
/// are cheap and opened with MDB_NOTLS, so any scheduler thread may run it.

#include "actors/interfaces.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>
#include <vector>

namespace cl::actors {

struct reader_state {
  static constexpr const char* name = "reader";
};

/// The reader's behavior over `store`.
reader_actor::behavior_type reader(reader_actor::stateful_pointer<reader_state> self,
                                   std::shared_ptr<storage::record_store> store);

/// A front for `workers` (detached readers, where a read is a round trip that blocks its thread):
/// hands each read to the next in turn, so reads wait on the database side by side; linked to
/// them (they fail and restart together).
reader_actor::behavior_type reader_front(reader_actor::pointer self, std::vector<reader_actor> workers);

}  // namespace cl::actors
