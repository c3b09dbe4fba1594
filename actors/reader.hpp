#pragma once
/// The reader actor: reads records of every table of the record store. LMDB read transactions
/// are cheap and opened with MDB_NOTLS, so any scheduler thread may run it.

#include "actors/interfaces.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>

namespace cl::actors {

struct reader_state {
  static constexpr const char* name = "reader";
};

/// The reader's behavior over `store`.
reader_actor::behavior_type reader(reader_actor::stateful_pointer<reader_state> self,
                                   std::shared_ptr<storage::record_store> store);

}  // namespace cl::actors
