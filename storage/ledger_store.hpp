#pragma once
/// The idempotency ledger store (spec 3.3, 4.6): the answer stored for each (tenant, client,
/// Idempotency-Key), written in the same transaction as the write it guards, and an index by
/// creation time for pruning in age order. It owns both key layouts.
///
/// SQL mapping: `idempotency(tenant, client_id, key, created_ms, record)` with primary key
/// (tenant, client_id, key) and an index on created_ms; `prune` = `DELETE ... WHERE created_ms <
/// $cutoff ORDER BY created_ms LIMIT $n` (in a loop), `prune_due` = `SELECT min(created_ms)`.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cl::storage {

class read_view;
class write_txn;

/// The ledger key of (tenant, client, Idempotency-Key).
std::string ledger_key(std::string_view tenant, std::string_view client_id, std::string_view key);

/// Reads of the ledger.
class ledger_reads {
public:
  virtual ~ledger_reads() = default;
  /// The stored record (domain/idempotency.hpp) under `key`, if any.
  virtual std::optional<std::string> record(std::string_view key) const = 0;
  /// True when some record was created before `cutoff_ms`.
  virtual bool prune_due(std::int64_t cutoff_ms) const = 0;
};

/// Writes of the ledger, inside the writer's transaction.
class ledger_writes : public ledger_reads {
public:
  /// Stores `record` under `key`, created at `created_ms` (and indexes it by that time).
  virtual void put(std::string_view key, std::int64_t created_ms, std::string_view record) = 0;
  /// Drops the time index entry of the record created at `created_ms` under `key` (a key reused
  /// after retention: its old record is replaced).
  virtual void drop_expired(std::string_view key, std::int64_t created_ms) = 0;
  /// Removes up to `limit` records created before `cutoff_ms`, oldest first.
  virtual void prune(std::int64_t cutoff_ms, std::size_t limit) = 0;
};

/// The ledger store over a read view's tables (the LMDB layout).
std::unique_ptr<ledger_writes> make_kv_ledger_store(const read_view& reads, write_txn* writes);

}  // namespace cl::storage
