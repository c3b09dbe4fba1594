#pragma once
/// The idempotency ledger store (spec 3.3, 4.6): the answer stored for each (tenant, client,
/// Idempotency-Key), written in the same transaction as the write it guards, and an index by
/// creation time for pruning in age order. It owns both key layouts.
///
/// SQL mapping: `idempotency(tenant, client_id, key, created_ms, record)` with primary key
/// (tenant, client_id, key) and an index on created_ms; `prune` = `DELETE ... WHERE created_ms <
/// $cutoff ORDER BY created_ms LIMIT $n` (in a loop), `prune_due` = `SELECT min(created_ms)`.

#include "domain/idempotency.hpp"
#include "storage/copyable.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cl::storage {

class ledger_writes;

/// Reads of the ledger.
class ledger_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = ledger_writes;
  /// The stored record (domain/idempotency.hpp) under `key`, if any.
  virtual std::optional<std::string> record(const domain::ledger_key& key) const = 0;
  /// True when some record was created before `cutoff_ms`.
  virtual bool prune_due(std::int64_t cutoff_ms) const = 0;
  /// How many records the ledger holds (a metric).
  virtual std::size_t records() const = 0;
};

/// Writes of the ledger, inside the writer's transaction.
class ledger_writes : public ledger_reads {
public:
  /// Stores `record` under `key`, created at `created_ms` (and indexes it by that time).
  virtual void put(const domain::ledger_key& key, std::int64_t created_ms, std::string_view record) = 0;
  /// Drops the time index entry of the record created at `created_ms` under `key` (a key reused
  /// after retention: its old record is replaced).
  virtual void drop_expired(const domain::ledger_key& key, std::int64_t created_ms) = 0;
  /// Removes up to `limit` records created before `cutoff_ms`, oldest first.
  virtual void prune(std::int64_t cutoff_ms, std::size_t limit) = 0;
};

}  // namespace cl::storage
