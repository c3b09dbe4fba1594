#pragma once
/// The PostgreSQL backend's side of the seam (storage-private): what a typed store's SQL
/// implementation works on, and how it registers. Each store's file (storage/postgresql/*_store.cpp)
/// implements the store's interface in SQL on the tables the schema's migrations create
/// (storage/postgresql/schema.cpp) and registers with `pg::implement`, as the key-value stores do
/// with `kv::implement`.

#include "storage/postgresql/connection.hpp"
#include "storage/record_store.hpp"
#include "storage/store_registry.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace cl::storage::pg {

class hot_records;

/// Keys of rows that stay once committed (nothing removes a catalog record): a write that only
/// needs its row to exist skips even the look-up for a key found here. Forgets everything when
/// it holds `cap` keys; a key it does not hold costs one statement, never a wrong answer.
class lasting_keys {
public:
  explicit lasting_keys(std::size_t cap = 65536) : cap_(cap) {}
  bool has(const std::string& key) const {
    std::lock_guard<std::mutex> guard{mutex_};
    return keys_.count(key) != 0;
  }
  /// After a commit: the rows the transaction wrote or found.
  void add(const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    std::lock_guard<std::mutex> guard{mutex_};
    if (keys_.size() + keys.size() > cap_) keys_.clear();
    keys_.insert(keys.begin(), keys.end());
  }

private:
  std::size_t cap_;
  mutable std::mutex mutex_;
  std::unordered_set<std::string> keys_;
};

/// What the writer's transaction lends the stores besides its connection.
struct batch_hooks {
  /// The hot-record keys the batch wrote: dropped from the cache once the batch ends.
  std::vector<std::string> touched;
  /// Keys of lasting rows the batch made sure of: `lasting` learns them at its commit.
  std::vector<std::string> ensured;
  /// Keys known committed before this transaction.
  const lasting_keys* lasting = nullptr;
  /// True in a batch run without savepoints: a row under a unique key is inserted without being
  /// looked up first (the idempotency ledger's). When it is there after all, the INSERT fails the
  /// batch, which runs again with a savepoint per mutation, and then reads.
  bool unread_keys = false;
};

/// Where a store's statements run: the writer's transaction (`writable`, with its `batch`), or a
/// pooled connection per statement (committed state); the view it belongs to, to use other stores
/// through. `hot`: the hot-record cache reads are served from (committed state only).
struct context {
  static constexpr const char* backend = "PostgreSQL";
  const session& db;
  bool writable;
  const read_view& view;
  hot_records* hot = nullptr;
  batch_hooks* batch = nullptr;
  /// Committed reads a replica may answer (storage/postgresql/replicas.hpp), with
  /// storage.postgresql.replica_url set: only stores whose every write logs change-log entries
  /// read through it (`reads()`: Resources, grants, contracts), since a replica is asked only to
  /// have replayed as far as the log positions the node knows. nullptr: `db`.
  const session* replica = nullptr;
  const session& reads() const { return replica ? *replica : db; }
};

/// Registers `Impl` as the PostgreSQL implementation of the store `Writes`. Returns true.
template <class Writes, class Impl>
bool implement() {
  return implement_store<Writes, Impl, context>();
}

/// A number as a statement parameter.
inline std::string num(std::int64_t n) { return std::to_string(n); }
inline std::string num(std::uint64_t n) { return std::to_string(n); }

/// Declares a part of the schema (at static initialisation, from the file of the stores that use
/// it): its numbered migrations, the first creating its tables. The core's part is "core"; a route
/// group that adds a store adds its tables as a part of its own. Returns true.
bool schema_part(std::string name, std::vector<std::string> migrations);

/// Each part's name and the version this build creates and reads.
std::vector<std::pair<std::string, int>> schema_versions();

/// The SQL of a part's migration `version` (from 1): a test builds a database as an earlier build
/// left it.
const std::string& schema_step(const std::string& part, int version);

/// Applies the migrations `db` has not had, every part's, in one transaction under a lock every
/// node takes (several nodes starting at once apply each once). Throws std::runtime_error when a
/// part's schema is newer than this build's. Answers each part's version and what it migrated,
/// for the start log.
std::string migrate(const connection& db);

}  // namespace cl::storage::pg
