// The idempotency ledger in SQL: `idempotency(tenant, client_id, key, created_ms, record)`. A put is
// a plain INSERT: when another node stored the same key first, the unique key makes this mutation
// lose (a conflict), and the writer runs it again, now finding that record to replay.

#include "storage/ledger_store.hpp"

#include "storage/postgresql/backend.hpp"

namespace cl::storage::pg {

namespace {

const statement get_record{"SELECT record FROM idempotency WHERE tenant = $1 AND client_id = $2 AND key = $3"};
// Exact up to 100,000 records; past that the planner's estimate (kept by autovacuum): a metric
// whose cost stays bounded however large the ledger grows.
const statement count_records{
  "SELECT CASE WHEN n < 100000 THEN n ELSE greatest(n, (SELECT reltuples::bigint FROM pg_class "
  "WHERE oid = 'idempotency'::regclass)) END FROM (SELECT count(*) AS n FROM (SELECT 1 FROM idempotency LIMIT 100000) x) c"};
const statement any_before{"SELECT EXISTS (SELECT 1 FROM idempotency WHERE created_ms < $1)"};
const statement insert_record{
  "INSERT INTO idempotency (tenant, client_id, key, created_ms, record) VALUES ($1, $2, $3, $4, $5)"};
const statement drop_record{
  "DELETE FROM idempotency WHERE tenant = $1 AND client_id = $2 AND key = $3 AND created_ms = $4"};
const statement prune_records{
  "DELETE FROM idempotency WHERE (tenant, client_id, key) IN (SELECT tenant, client_id, key FROM idempotency "
  "WHERE created_ms < $1 ORDER BY created_ms LIMIT $2)"};

class pg_ledger_store final : public ledger_writes {
public:
  explicit pg_ledger_store(const context& c) : db_(c.db), unread_(c.batch && c.batch->unread_keys) {}

  /// In a batch without savepoints, absent unread: the key's INSERT finds a record that is there
  /// (another node's, or one past retention not pruned yet), and the batch runs again with
  /// savepoints, reading it. The ledger actor looked the key up in committed state a moment ago.
  std::optional<std::string> record(const domain::ledger_key& k) const override {
    if (unread_) return std::nullopt;
    auto r = db_.run(get_record, {k.tenant, k.client_id, k.key});
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }

  bool prune_due(std::int64_t cutoff_ms) const override {
    return db_.run(any_before, {num(cutoff_ms)}).text(0, 0) == "t";
  }

  std::size_t records() const override { return static_cast<std::size_t>(db_.run(count_records).integer(0, 0)); }

  void put(const domain::ledger_key& k, std::int64_t created_ms, std::string_view record) override {
    db_.send(insert_record, {k.tenant, k.client_id, k.key, num(created_ms), record});
  }

  void drop_expired(const domain::ledger_key& k, std::int64_t created_ms) override {
    db_.run(drop_record, {k.tenant, k.client_id, k.key, num(created_ms)});
  }

  void prune(std::int64_t cutoff_ms, std::size_t limit) override {
    db_.run(prune_records, {num(cutoff_ms), num(static_cast<std::uint64_t>(limit))});
  }

private:
  const session& db_;
  bool unread_;
};

}  // namespace

const bool ledger_implemented = implement<ledger_writes, pg_ledger_store>();

}  // namespace cl::storage::pg
