#pragma once
/// The ordered key-value layer under the typed stores (storage-private: nothing outside storage/
/// and its tests includes this header). LMDB (storage/kv/lmdb_store.cpp) and the in-memory backend
/// (storage/kv/memory_store.cpp) are ordered key-value engines; the typed stores are written once on
/// this layer and `make_record_store` gives any engine the record store's write path, change log and
/// views. A backend that is not a key-value store (PostgreSQL) implements the typed store
/// interfaces instead and never sees this file.
///
/// A table is declared by the file that owns it (`declare_table("blob_uploads")`, at static
/// initialisation); its name is its on-disk name and the engine opens every declared table.

#include "storage/record_store.hpp"
#include "storage/store_registry.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::storage::kv {

/// A declared table.
struct table {
  std::uint16_t index = 0;
};

/// Declares table `name` (the same name twice is the same table) and returns it.
table declare_table(std::string_view name);

/// Every declared table's name, by index.
std::vector<std::string> table_names();

using rows = std::vector<std::pair<std::string, std::string>>;

/// Reads of an engine or a transaction.
class reader {
public:
  virtual ~reader() = default;
  virtual std::optional<std::string> get(table t, std::string_view key) const = 0;
  /// Up to `limit` entries whose key starts with `prefix` and sorts after `after` (from the start
  /// of the prefix when `after` is empty), in key order.
  virtual rows scan(table t, std::string_view prefix, std::string_view after, std::size_t limit) const = 0;
  /// How many entries `t` holds, as this reader sees it.
  virtual std::size_t entries(table t) const = 0;
};

/// Reads and writes inside a transaction.
class writer : public reader {
public:
  virtual void put(table t, std::string_view key, std::string_view value) = 0;
  virtual void erase(table t, std::string_view key) = 0;
  /// `put` of a key that sorts after every key of `t` (an engine may append faster).
  virtual void append(table t, std::string_view key, std::string_view value) { put(t, key, value); }
};

/// A write transaction of an engine. Destroyed without `commit`, it leaves nothing behind.
class transaction : public writer {
public:
  /// A nested transaction: its commit makes its writes part of this one; dropped, it undoes only them.
  virtual std::unique_ptr<transaction> child() = 0;
  /// Commits (a top-level transaction durably). Throws std::runtime_error when that fails.
  virtual void commit() = 0;
};

/// An ordered key-value engine: reads of committed state (each call sees a committed state) and one
/// write transaction at a time.
class engine : public reader {
public:
  virtual std::unique_ptr<transaction> begin() = 0;
  /// The greatest key of `t`, if any.
  virtual std::optional<std::string> last_key(table t) const = 0;
  /// Bytes the data takes and bytes it may take at most (LMDB: pages in use, the map size); 0, 0
  /// for an engine without a bound (memory).
  virtual std::pair<std::uint64_t, std::uint64_t> space() const { return {0, 0}; }
  /// True when the engine takes no writes (`begin` throws): a migration's source.
  virtual bool read_only() const { return false; }
};

/// What a typed store's key-value implementation works on: reads (the engine, or the transaction
/// it runs in), writes (null in a read-only view), and the typed view it belongs to (to use other
/// stores through).
struct context {
  static constexpr const char* backend = "key-value";
  const reader& r;
  writer* w;
  const read_view& view;
  std::uint64_t* next_seq = nullptr;  ///< in a write: the change log's next sequence (an import moves it)
};

/// The change log's tables (`changes`: big-endian sequence -> entry; `change_consumers`).
table changes_table();

/// Registers `Impl` as the key-value implementation of the store `Writes` (at static
/// initialisation, from the file that implements it). Returns true.
template <class Writes, class Impl>
bool implement() {
  return implement_store<Writes, Impl, context>();
}

/// The record store on `engine`: typed views, the group-commit write path and the change log.
/// `description`: what `record_store::describe` answers.
std::shared_ptr<record_store> make_record_store(std::unique_ptr<engine> engine, std::string description = {});

/// The engine under a record store made by `make_record_store` (tests look at raw tables).
const engine& engine_of(const record_store& store);

/// The key-value writes of a write transaction of such a record store (tests write raw entries).
writer& writer_of(write_txn& tx);

/// Big-endian 8 bytes of `n`: keys that sort numerically.
std::string big_endian_key(std::uint64_t n);

/// The number in the first 8 bytes of `key` (0 when it is shorter).
std::uint64_t big_endian_value(std::string_view key);

/// `tenant` + NUL + `id`: the key layout of tenant-scoped tables.
std::string tenant_key(std::string_view tenant, std::string_view id);

}  // namespace cl::storage::kv
