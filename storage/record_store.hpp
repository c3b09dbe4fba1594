#pragma once
/// The system of record. LMDB implements it on one node; a shared backend (PostgreSQL) would be an
/// added implementation of the same interface. Keys are prefixed by tenant (see `tenant_key`).

#include "storage/blob_store.hpp"
#include "storage/change_log.hpp"
#include "storage/content_stores.hpp"
#include "storage/contract_store.hpp"
#include "storage/grant_store.hpp"
#include "storage/ledger_store.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::storage {

/// The tables (LMDB named databases) of the record store.
enum class table : std::uint8_t {
  resources,   ///< tenant\0res_id -> Resource record JSON
  versions,    ///< tenant\0res_id\0ver_id -> snapshot JSON
  works,       ///< tenant\0wk_id -> Work JSON
  sources,     ///< tenant\0src_id -> Source JSON
  activities,  ///< tenant\0act_id -> Activity JSON
  id_index,    ///< id -> tenant (tells "another tenant's" from "missing")
  ledger,      ///< tenant\0client_id\0key -> idempotency record JSON (domain/idempotency.hpp)
  changes,     ///< big-endian sequence -> change entry JSON (written with every mutation)
  agents,      ///< tenant\0agt_id -> Agent JSON (derived from principals on their first write)
  contracts,   ///< tenant\0ctr_id -> the contract's latest version JSON
  contract_versions,  ///< tenant\0ctr_id\0<8-byte big-endian version> -> that version's JSON
  contract_works,     ///< tenant\0wk_id\0ctr_id -> "" (which contracts list a Work in their latest version)
  grants,             ///< tenant\0res_id\0principal -> grant JSON (who may do what with a Resource)
  grants_by_principal,  ///< tenant\0principal\0res_id -> role (the same grants, by grantee)
  ledger_expiry,        ///< 8-byte big-endian created_ms + ledger key -> "" (pruning in time order)
  change_consumers,     ///< consumer name -> 8-byte big-endian sequence it has applied (change-log retention)
  activities_by_resource,  ///< tenant\0res_id\0act_id -> "" (the Activities about a Resource)
  blob_uploads,        ///< tenant\0upl_id -> upload record (storage/blob_store.hpp)
  blob_upload_expiry,  ///< 8-byte expires_at + tenant\0upl_id -> "" (uploads in progress, for the sweep)
  blob_versions,       ///< tenant\0blb_id\0<8-byte ~version> -> blob version record (newest first)
  blob_refs,           ///< tenant\0blb_id\0res_id -> "" (Resources whose content references a blob)
  count_,  ///< not a table: how many there are (each has its LMDB name in lmdb_store.cpp, checked at compile time)
};

/// Big-endian 8 bytes of `n`: keys that sort numerically.
std::string big_endian_key(std::uint64_t n);

/// `tenant` + NUL + `id`: the key layout of tenant-scoped tables.
std::string tenant_key(std::string_view tenant, std::string_view id);

/// A page of a typed list query: `(id, canonical JSON)` in id order. A filtered query examines a
/// bounded number of candidates: `resume_after` is the last id examined, `exhausted` tells there is
/// nothing after it.
struct record_page {
  std::vector<std::pair<std::string, std::string>> entries;
  std::string resume_after;
  bool exhausted = false;
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

/// What reads see: a snapshot of the record store, or the writer's transaction (which sees its own
/// writes). The same typed query runs on either. The typed stores (`contracts()`, ...) are the API
/// every caller outside storage/ uses; the raw table access below is what the key-value
/// implementations of those stores are written on (and the search index's rebuild scan).
class read_view {
public:
  virtual ~read_view() = default;
  virtual std::optional<std::string> get(table t, std::string_view key) const = 0;
  /// Up to `limit` entries whose key starts with `prefix` and sorts after `after` (or from the
  /// start when `after` is empty), in key order.
  virtual std::vector<std::pair<std::string, std::string>> scan(table t, std::string_view prefix, std::string_view after,
                                                                std::size_t limit) const = 0;
  /// Contracts, as this view sees them.
  virtual const contract_reads& contracts() const = 0;
  /// Access grants, as this view sees them.
  virtual const grant_reads& grants() const = 0;
  /// The idempotency ledger, as this view sees it.
  virtual const ledger_reads& ledger() const = 0;
  /// Resources and their snapshots, as this view sees them.
  virtual const resource_reads& resources() const = 0;
  /// Activities, as this view sees them.
  virtual const activity_reads& activities() const = 0;
  /// Works, Sources and Agents, as this view sees them.
  virtual const catalog_reads& catalog() const = 0;
  /// Blob uploads and versions, as this view sees them.
  virtual const blob_reads& blobs() const = 0;
};

/// What a mutation sees and changes inside the writer's transaction.
class write_txn : public read_view {
public:
  using read_view::contracts;
  using read_view::grants;
  using read_view::ledger;
  using read_view::resources;
  using read_view::activities;
  using read_view::catalog;
  using read_view::blobs;
  using read_view::scan;
  virtual void put(table t, std::string_view key, std::string_view value) = 0;
  virtual void erase(table t, std::string_view key) = 0;
  /// Up to `limit` entries whose key starts with `prefix`, in key order, as this transaction sees them.
  std::vector<std::pair<std::string, std::string>> scan(table t, std::string_view prefix, std::size_t limit) const {
    return scan(t, prefix, {}, limit);
  }
  /// Contracts, to read and write in this transaction.
  virtual contract_writes& contracts() = 0;
  /// Access grants, to read and write in this transaction.
  virtual grant_writes& grants() = 0;
  /// The idempotency ledger, to read and write in this transaction.
  virtual ledger_writes& ledger() = 0;
  virtual resource_writes& resources() = 0;
  virtual activity_writes& activities() = 0;
  virtual catalog_writes& catalog() = 0;
  virtual blob_writes& blobs() = 0;
  /// How many puts, erases and change-log entries this transaction has made so far: a mutation
  /// that compares it before and after knows whether another part of it wrote.
  virtual std::uint64_t writes() const = 0;
  /// Appends `entry` to the change log in this transaction (its `seq` is assigned: the next
  /// number, without gaps once committed); returns that sequence number.
  virtual std::uint64_t log_change(const change_entry& entry) = 0;
};

/// One unit of work for the writer. Returns true to keep its changes, false to roll back only its
/// own changes (e.g. a failed precondition); the rest of the group commits regardless.
/// A mutation may run more than once (the group is retried the careful way when one mutation
/// throws or refuses after writing); only its last run's effects count, so it must not act
/// outside `write_txn` except to record its outcome. Checking before writing keeps groups fast.
using mutation = std::function<bool(write_txn&)>;

/// Read access to stored records and the group-commit write path. Safe from any thread; `apply`
/// is called by one writer at a time.
class record_store : public read_view {
public:
  /// How many entries `t` holds now.
  virtual std::size_t entries(table t) const = 0;

  /// How many idempotency records the ledger holds now (a metric).
  std::size_t ledger_records() const { return entries(table::ledger); }

  /// Runs every mutation of `batch` in one transaction (each isolated from the others' refusals),
  /// then commits durably (one fsync for the whole group). The result says which mutations kept their
  /// changes. Throws std::runtime_error when the commit fails: then nothing of the batch is stored.
  virtual std::vector<bool> apply(const std::vector<mutation>& batch) = 0;

  /// The sequence of the last committed change-log entry (0 when empty). Safe from any thread.
  virtual std::uint64_t last_change() const = 0;

  /// Committed change-log entries with a sequence above `after`, in order, at most `limit`. An
  /// entry is visible only once its transaction has committed.
  virtual std::vector<change_entry> read_from(std::uint64_t after, std::size_t limit) const = 0;

  /// Called after every durable commit that appended change-log entries, with the last sequence,
  /// on the writer's thread: it must be quick (e.g. send an actor a message). Returns a handle for
  /// `unsubscribe`.
  using commit_listener = std::function<void(std::uint64_t last_seq)>;
  virtual std::uint64_t subscribe(commit_listener listener) = 0;
  virtual void unsubscribe(std::uint64_t handle) = 0;

  /// Registered change-log consumers and the sequence each has applied. Retention never removes an
  /// entry a registered consumer has not applied.
  virtual std::vector<std::pair<std::string, std::uint64_t>> consumers() const = 0;

  /// The canonical JSON bytes of a Resource of `tenant`, or nullopt.
  std::optional<std::string> get_resource(std::string_view tenant, std::string_view id) const {
    return resources().get(tenant, id);
  }
};

/// Registers (or moves) change-log consumer `name` at `applied`: the last sequence it has applied.
mutation acknowledge_changes(std::string name, std::uint64_t applied);

/// Removes a change-log consumer (it no longer holds entries back).
mutation forget_consumer(std::string name);

/// Removes change-log entries written before `cutoff_ms` that every registered consumer has
/// applied, oldest first, at most `limit` of them.
mutation prune_changes(std::int64_t cutoff_ms, std::size_t limit);

/// On-disk format this build writes; a data dir with a newer one is refused, an older one migrated
/// at open. 2: contract versions carry a typed header and the contract-to-Work index is exact.
/// 3: Activities are indexed by the Resource they are about. 4: Resources and Activities carry a
/// typed header beside their JSON (storage/content_stores.hpp). 5: the usage pairs each tenant's
/// contract versions name are recorded (`contract_reads::usages_named`).
inline constexpr int lmdb_format_version = 5;

/// Opens (creating if needed) the LMDB environment in `data_dir`. Throws std::runtime_error with a
/// message that says what to do when the directory cannot be used (newer format, bad permissions).
std::shared_ptr<record_store> open_lmdb_store(const std::string& data_dir, std::size_t map_size_mib);

}  // namespace cl::storage
