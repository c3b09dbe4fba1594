#pragma once
/// The seam of the system of record: views of typed stores, the group-commit write path and the
/// change log, with no backend and no store named here (storage/stores.hpp adds the core stores'
/// interfaces for callers). Backends implement it: the key-value engines, LMDB and memory
/// (storage/kv/), and PostgreSQL (storage/postgresql/).

#include "storage/change_log.hpp"
#include "storage/typed_store.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::storage {

class contract_reads;
class contract_writes;
class grant_reads;
class grant_writes;
class ledger_reads;
class ledger_writes;
class resource_reads;
class resource_writes;
class activity_reads;
class activity_writes;
class catalog_reads;
class catalog_writes;

/// A page of a typed list query: `(id, canonical JSON)` in id order. A filtered query examines a
/// bounded number of candidates: `resume_after` is the last id examined, `exhausted` tells there is
/// nothing after it.
struct record_page {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string resume_after;
  bool exhausted = false;
  std::size_t examined = 0;  ///< candidates the query examined (at most its budget)
};

/// The Resources of a tenant, in id order. With `readable_by`, only those on which one of these
/// principals (a subject and its groups) holds a grant: the by-principal grant index drives the
/// walk, so a page costs the page, whatever the tenant holds.
struct resource_query {
  std::string tenant;
  std::vector<std::string> readable_by;  ///< empty: every Resource of the tenant
  std::string work_id, type, language;   ///< empty: any
  std::optional<bool> staged;            ///< true: only staged; false: only attached
  std::string after;                     ///< resume after this id (empty: from the start)
  std::size_t limit = 50;
  std::size_t budget = 10000;            ///< candidates examined at most
};

/// The Activities of a tenant, in id (time) order. With `readable_by`, an Activity about a
/// Resource is kept only when one of these principals holds a grant on it.
struct activity_query {
  std::string tenant;
  std::vector<std::string> readable_by;
  std::string type;         ///< empty: any
  std::string resource_id;  ///< empty: any target
  std::string after;
  std::size_t limit = 50;
  std::size_t budget = 10000;
};

/// What reads see: the record store (each call reads committed state), or the writer's transaction
/// (which sees its own writes). Everything is read through typed stores: `store<X_reads>()` for any
/// registered store (a route group's own, storage/typed_store.hpp), with shortcuts for the core's.
class read_view {
public:
  virtual ~read_view() = default;
  /// The store `S` (an `X_reads` class), as this view sees it.
  template <class S>
  const S& store() const {
    return static_cast<const typename S::writes&>(find_store(kind_of<typename S::writes>()));
  }
  const contract_reads& contracts() const;
  const grant_reads& grants() const;
  const ledger_reads& ledger() const;
  const resource_reads& resources() const;
  const activity_reads& activities() const;
  const catalog_reads& catalog() const;
  /// The store in `slot` (below `store_kinds_count()`), or none when this backend implements none
  /// there: what iterates every store (storage/copyable.hpp).
  const typed_store* store_at(std::size_t slot) const;

protected:
  virtual const typed_store& find_store(store_kind kind) const = 0;
};

/// What a mutation sees and changes inside the writer's transaction.
class write_txn : public read_view {
public:
  using read_view::store;
  using read_view::contracts;
  using read_view::grants;
  using read_view::ledger;
  using read_view::resources;
  using read_view::activities;
  using read_view::catalog;
  /// The store `S` (an `X_reads` or `X_writes` class), to read and write in this transaction.
  template <class S>
  S& store() {
    return static_cast<typename S::writes&>(find_store_to_write(kind_of<typename S::writes>()));
  }
  contract_writes& contracts();
  grant_writes& grants();
  ledger_writes& ledger();
  resource_writes& resources();
  activity_writes& activities();
  catalog_writes& catalog();
  /// How many puts, erases and change-log entries this transaction has made so far: a mutation
  /// that compares it before and after knows whether another part of it wrote.
  virtual std::uint64_t writes() const = 0;
  /// Appends `entry` to the change log in this transaction. Its `seq` is assigned by the backend
  /// (the next number, without gaps once committed), as is its `transaction`.
  virtual void log_change(const change_entry& entry) = 0;
  /// The sequence of the last change-log entry this transaction sees (its own included): a
  /// consumer created in it follows the log from there.
  virtual std::uint64_t last_logged() const = 0;
  /// Registers (or moves) change-log consumer `name` at `applied`: the last sequence it has applied.
  virtual void acknowledge_changes(std::string_view name, std::uint64_t applied) = 0;
  /// Removes a change-log consumer: it no longer holds entries back.
  virtual void forget_consumer(std::string_view name) = 0;
  /// Removes change-log entries written before `cutoff_ms` that every registered consumer has
  /// applied, oldest first, at most `limit` of them; the newest entry always stays.
  virtual void prune_changes(std::int64_t cutoff_ms, std::size_t limit) = 0;

protected:
  virtual typed_store& find_store_to_write(store_kind kind) = 0;
};

/// Thrown by a store that has no room for a write (LMDB's map is full). `apply` lets it through:
/// nothing of the group is stored, and the writer answers every write of it "storage full".
struct store_full : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Thrown by a store handed a key or value it cannot hold as given (PostgreSQL's `text` ends at
/// U+0000 and takes only UTF-8): refused, never cut or rewritten. Requests never bring one (the
/// API refuses such text where it enters, domain/text.hpp); this is each store's own guard, and
/// the plans answer it 400 INVALID_ARGUMENT. The message never holds the value.
struct value_unstorable : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Throws `value_unstorable` when a text no backend can hold as given is among `texts`: one with
/// U+0000, or that is not UTF-8. Every backend's stores check the keys and values they are handed
/// with it (PostgreSQL's connection checks every parameter), so each refuses the same, on reads as
/// on writes (tests/storage/differential_test.cpp).
void require_storable(std::initializer_list<std::string_view> texts);

/// One unit of work for the writer. Returns true to keep its changes, false to roll back only its
/// own changes (e.g. a failed precondition); the rest of the group commits regardless.
/// A mutation may run more than once (the group is retried the careful way when one mutation
/// throws or refuses after writing); only its last run's effects count, so it must not act
/// outside `write_txn` except to record its outcome. Checking before writing keeps groups fast.
using mutation = std::function<bool(write_txn&)>;

/// A registered change-log consumer: the last sequence it applied, and when it last said so (its
/// `acknowledge_changes`; 0 when recorded by a build that kept no time).
struct change_consumer {
  std::string name;
  std::uint64_t applied = 0;
  std::int64_t acknowledged_ms = 0;
};

/// Read access to stored records and the group-commit write path. Safe from any thread; `apply`
/// is called by one writer at a time.
class record_store : public read_view {
public:
  /// Runs every mutation of `batch` in one transaction (each isolated from the others' refusals),
  /// then commits durably (one fsync for the whole group). The result says which mutations kept their
  /// changes. Throws std::runtime_error when the commit fails: then nothing of the batch is stored.
  virtual std::vector<bool> apply(const std::vector<mutation>& batch) = 0;

  /// The sequence of the last committed change-log entry (0 when empty). Safe from any thread.
  virtual std::uint64_t last_change() const = 0;

  /// A change-log position every entry up to which is committed and visible to reads begun after
  /// this call: the last committed one or earlier, known without a round trip where the backend
  /// needs one for `last_change` (PostgreSQL: this node's last commit, or what its follower of the
  /// log last read). What a read tells the client it is at least as recent as.
  virtual std::uint64_t known_change() const { return last_change(); }

  /// The identity of this deployment's records (a random id made when the store was first opened,
  /// kept in it): positions and cursors are sealed for it, so another deployment's (the same secrets,
  /// another database) do not open here. It moves with the records (`contentlake migrate`, a
  /// backup and its restore). Empty for a store opened read-only that has none.
  virtual std::string deployment_id() const { return {}; }

  /// Makes `id` this store's deployment identity (`contentlake migrate`: the target continues the
  /// source's history).
  virtual void adopt_deployment_id(const std::string& id) { (void)id; }

  /// What the store is, for the start log: the backend, its format or schema, and what opening it
  /// migrated ("lmdb format 8", "postgresql schema core 3, cluster 2; migrated core 2 -> 3").
  virtual std::string describe() const { return {}; }

  /// How long ago this node last read the change log to its head (PostgreSQL: its follower, every
  /// `follow_interval`, or a request that brought a position): a change another node committed
  /// since may be missing from this node's caches. Zero where one node writes everything.
  virtual std::chrono::milliseconds log_lag() const { return std::chrono::milliseconds{0}; }

  /// False while `log_lag()` is past the bound the node's caches may lag (PostgreSQL:
  /// `max_lag`): access roles, resolved rights and hot records are then read from the database,
  /// not from caches that may miss another node's change. Always true on a single node.
  virtual bool caches_current() const { return true; }

  /// Makes this node's reads reflect every change up to `position` when it is committed (PostgreSQL:
  /// its follower reads the log now if it has not reached it, dropping what other nodes changed
  /// from the caches); answers whether they do. False only for a position past the log's head.
  virtual bool reflects(std::uint64_t position) { return position <= last_change(); }

  /// How often something must call `follow` (the service's supervised log follower); zero where
  /// one node writes everything, or the store follows on a thread of its own.
  virtual std::chrono::milliseconds follow_every() const { return std::chrono::milliseconds{0}; }

  /// Reads the change log to its head: what other nodes changed leaves this node's caches, the
  /// commit listeners and `watch_others` are told. Throws when the database cannot be reached.
  virtual void follow() {}

  /// Whether this node's reads reflect every change up to `position` already, asking nothing
  /// (no round trip, no wait): where false, `reflects` may wait on the database.
  virtual bool reflects_now(std::uint64_t position) const { return position <= last_change(); }

  /// A Resource's current record when it can be read without waiting on anything: LMDB and the
  /// memory store always (a read transaction), PostgreSQL from its hot-record cache only.
  /// `answered` false: read it through the reader actor (whose read fills that cache). A hit is
  /// as fresh as the reader's read (the caches are dropped before a write is answered).
  struct instant_resource {
    bool answered = false;
    std::optional<std::string> record;  ///< nullopt: no such Resource
    std::uint64_t log_position = 0;     ///< `known_change()` read before the record
  };
  virtual instant_resource resource_at_once(const std::string& tenant, const std::string& id) const {
    (void)tenant;
    (void)id;
    return {};
  }

  /// Bytes the store uses and the most it may hold (LMDB: pages in use, `storage.map_size_mib`);
  /// 0, 0 when it has no bound (memory). For capacity metrics.
  virtual std::pair<std::uint64_t, std::uint64_t> space() const { return {0, 0}; }

  /// Whether the store can be reached now (PostgreSQL: a round trip on a pooled connection; an
  /// embedded store always can). Called off the request path, by the readiness check.
  virtual bool probe() const { return true; }

  /// Committed change-log entries with a sequence above `after`, in order, at most `limit`. An
  /// entry is visible only once its transaction has committed.
  virtual std::vector<change_entry> read_from(std::uint64_t after, std::size_t limit) const = 0;

  /// Called after every durable commit that appended change-log entries, with the last sequence,
  /// on the writer's thread: it must be quick (e.g. send an actor a message). Returns a handle for
  /// `unsubscribe`.
  using commit_listener = std::function<void(std::uint64_t last_seq)>;
  virtual std::uint64_t subscribe(commit_listener listener) = 0;
  virtual void unsubscribe(std::uint64_t handle) = 0;

  /// Called with the change-log entries other nodes on the same database committed, as this node
  /// reads them from the log (PostgreSQL: its follower, every `follow_interval`), before the
  /// `subscribe` listeners hear of them (so a write on another node wakes this node's long polls,
  /// streams, webhook dispatch and edge purges too). A single-node backend never calls it. For what
  /// a write elsewhere must invalidate here (caches); on the follower's thread: quick. Kept for the
  /// store's life.
  using others_listener = std::function<void(const std::vector<change_entry>&)>;
  virtual void watch_others(others_listener listener) { (void)listener; }

  /// Registered change-log consumers, by name. Retention never removes an entry a registered
  /// consumer has not applied.
  virtual std::vector<change_consumer> consumers() const = 0;

  /// The canonical JSON bytes of a Resource of `tenant`, or nullopt.
  std::optional<std::string> get_resource(std::string_view tenant, std::string_view id) const;
};

/// The mutations of the consumer operations of `write_txn`, for a writer's batch.
mutation acknowledge_changes(std::string name, std::uint64_t applied);

mutation forget_consumer(std::string name);

mutation prune_changes(std::int64_t cutoff_ms, std::size_t limit);

}  // namespace cl::storage
