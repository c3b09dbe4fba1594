#pragma once
/// The idempotency ledger actor (spec 3.3, 4.6): before a write with an Idempotency-Key executes,
/// it says whether the key's stored answer is to be replayed, was used for another request (422),
/// or is held by a request still executing (409); otherwise the request holds the key until it
/// answers. The record itself is written by the guarded mutation in the same transaction as the
/// write (actors/plan_write.cpp), never by this actor. It also prunes records past retention.
///
/// Looking a key up is a round trip on PostgreSQL. With `trusts_writes`, a key this ledger does
/// not remember having a record is held without a look-up ("unchecked") when the request's only
/// effect is its guarded write: the record that write inserts under the key's unique index is the
/// check (a record there already fails the batch, which runs again and answers from it). An
/// unchecked request answered by anything else than its guarded write asks `check` before its
/// answer leaves (a refusal must not hide a stored answer). A key that was stored, replayed or
/// found is remembered (bounded, oldest forgotten first) and looked up from then on, so a client
/// retrying one key in a loop reaches the writer once, not on every retry.

#include "actors/directory.hpp"
#include "actors/interfaces.hpp"
#include "actors/metrics.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cl::storage {
class lease_keeper;
}

namespace cl::actors {

struct ledger_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<actor_directory> directory;  ///< where the writer is found for pruning
  std::shared_ptr<metrics> stats;              ///< may be null
  std::int64_t retention_ms = 24 * 3600 * 1000;
  std::chrono::milliseconds hold{10000};       ///< a held key is freed after this even if never released
  std::chrono::milliseconds prune_interval{60000};
  bool prunes = true;  ///< this ledger prunes records and reports the gauges (of several shards, one does)
  bool trusts_writes = false;  ///< unchecked keys (above): where a look-up is a round trip
  std::size_t remembered_keys = 16384;  ///< keys known to have a record, looked up (of each shard)
  /// Pruning runs only while this node holds the `pruning` lease (null: always, one node).
  std::shared_ptr<const storage::lease_keeper> leases{};
};

/// A mutation that removes up to `limit` records created before `cutoff_ms`, oldest first.
storage::mutation prune_ledger(std::int64_t cutoff_ms, std::size_t limit);

struct ledger_state {
  static constexpr const char* name = "ledger";
  std::map<domain::ledger_key, std::chrono::steady_clock::time_point> held;  ///< key -> freed at
  std::set<domain::ledger_key> remembered;    ///< keys known to have a record (trusts_writes)
  std::deque<std::set<domain::ledger_key>::iterator> remembered_order;  ///< the same, oldest first
};

ledger_actor::behavior_type ledger(ledger_actor::stateful_pointer<ledger_state> self,
                                   std::shared_ptr<const ledger_config> cfg);

/// Several ledgers behind one handle, each for the keys that hash to it, so the record lookups of
/// different keys run at once (on PostgreSQL each is a round trip; one ledger did them in turn).
/// A key's begin and release always reach the same shard: a key in use is refused as with one.
/// Linked to its shards: when one dies, all do, and the supervisor restarts them.
ledger_actor::behavior_type ledger_shards(ledger_actor::pointer self, std::vector<ledger_actor> shards);

}  // namespace cl::actors
