#pragma once
/// The hot-record cache of the PostgreSQL backend (storage-private): Resources read lately, with
/// their typed header, so a hot read costs no round trip to the database. Bounded in bytes (least
/// recently read out first: `domain::sharded_lru`, as the representation cache). Never stale past the change log: the writer's commit drops what it
/// wrote before the write is answered, and the store's follower drops what the log says other
/// nodes changed (docs/architecture.md, "The hot-record cache").
///
/// A read that missed reserves the key first (`reserve`) and fills it (`put`) only if the key was not
/// dropped in between: a read of the database that raced a commit could hold the version before it,
/// and must not outlive the drop that followed. A reservation is per key, so writes to other keys
/// do not stop a fill.

#include "domain/sharded_lru.hpp"
#include "storage/content_stores.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cl::storage::pg {

class hot_records {
public:
  struct entry {
    std::string record;
    resource_header header;
  };

  /// `budget`: bytes of keys and records held at most (0: the cache holds nothing).
  explicit hot_records(std::size_t budget, std::size_t shards = 16);

  static std::string key(std::string_view tenant, std::string_view id);

  /// `find` answers only while `current()` holds (the store's view of the change log is recent
  /// enough that no other node's change can be missing); set once, before the cache is used.
  void trust_while(std::function<bool()> current) { current_ = std::move(current); }

  /// Before reading the database after a miss: the key's reservation (hand it to `put`).
  std::uint64_t reserve(const std::string& key);
  std::optional<entry> find(std::string_view key) const;
  /// Keeps `e` if the key's reservation `token` still stands (the key was not dropped since).
  void put(const std::string& key, entry e, std::uint64_t token);
  void drop(std::string_view key);
  void clear();

  std::size_t bytes() const;
  std::size_t size() const;

private:
  /// A key reserved by a read (no value yet) or filled.
  struct slot {
    std::optional<entry> value;
    std::uint64_t token = 0;
  };
  struct cost {
    std::size_t operator()(std::string_view key, const slot& s) const;
  };

  std::function<bool()> current_;
  std::atomic<std::uint64_t> tokens_{0};
  domain::sharded_lru<slot, cost> slots_;
};

}  // namespace cl::storage::pg
