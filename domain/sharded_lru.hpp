#pragma once
/// A map from string keys to values, bounded in bytes and split into shards (a mutex each), least
/// recently read out first. What an entry costs is `Cost{}(key, value)` (its strings and about 160
/// bytes of list node, index slot and control blocks). The representation cache
/// (actors/representation_cache.hpp) and the PostgreSQL backend's hot-record cache
/// (storage/postgresql/hot_records.hpp) are both this, with their own rules on top.
///
/// Every call takes one shard's lock; the callbacks run under it (keep them short, never call back
/// into the cache). Reads share it: a hit on the entry read last in its shard (a hot key) waits for
/// no other reader, so a reader the scheduler preempts mid-read holds no other one up; a hit on
/// another entry then takes the lock alone to count it as read lately.

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cl::domain {

template <class Value, class Cost>
class sharded_lru {
public:
  /// `budget`: bytes held at most, all shards together (0: nothing is kept).
  explicit sharded_lru(std::size_t budget, std::size_t shards = 16)
    : count_(shards == 0 ? 1 : shards), budget_per_shard_(budget / count_), shards_(std::make_unique<shard[]>(count_)) {}

  /// Calls `hit(value)` on `key`'s entry (other readers may call theirs at the same time: `hit`
  /// only reads); when it answers true (a hit), the entry counts as read lately. False when absent
  /// or not a hit.
  template <class Hit>
  bool read(std::string_view key, Hit&& hit) const {
    auto& s = of(key);
    {
      std::shared_lock guard{s.mutex};
      auto at = s.index.find(key);
      if (at == s.index.end() || !hit(static_cast<const Value&>(at->second->value))) return false;
      if (at->second == s.order.begin()) return true;  // the shard's most recently read already
    }
    std::lock_guard guard{s.mutex};
    if (auto at = s.index.find(key); at != s.index.end()) s.order.splice(s.order.begin(), s.order, at->second);
    return true;
  }

  /// Calls `change(existing)` (null when `key` holds nothing): a value it answers replaces the
  /// entry (or is added), read lately; nullopt leaves things as they are. An entry bigger than its
  /// shard is not kept; others are let go, least recently read first, until the shard is within
  /// its budget.
  template <class Change>
  void update(const std::string& key, Change&& change) {
    auto& s = of(key);
    std::lock_guard guard{s.mutex};
    auto at = s.index.find(key);
    const Value* existing = at == s.index.end() ? nullptr : &at->second->value;
    std::optional<Value> next = change(existing);
    if (!next) return;
    if (at != s.index.end()) erase(s, at->second);
    s.order.push_front(slot{key, std::move(*next)});
    auto& fresh = s.order.front();
    s.index.emplace(fresh.key, s.order.begin());
    s.bytes += cost(fresh);
    if (cost(fresh) > budget_per_shard_) return erase(s, s.order.begin());
    while (s.bytes > budget_per_shard_ && !s.order.empty()) erase(s, std::prev(s.order.end()));
  }

  /// Keeps `value` under `key`, replacing what it held.
  void insert(const std::string& key, Value value) {
    update(key, [&value](const Value*) { return std::optional<Value>{std::move(value)}; });
  }

  void erase(std::string_view key) {
    auto& s = of(key);
    std::lock_guard guard{s.mutex};
    if (auto at = s.index.find(key); at != s.index.end()) erase(s, at->second);
  }

  void clear() {
    for (std::size_t i = 0; i < count_; ++i) {
      auto& s = shards_[i];
      std::lock_guard guard{s.mutex};
      s.index.clear();
      s.order.clear();
      s.bytes = 0;
    }
  }

  std::size_t bytes() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      std::shared_lock guard{shards_[i].mutex};
      n += shards_[i].bytes;
    }
    return n;
  }

  /// The entries for which `counted(value)` holds.
  template <class Pred>
  std::size_t count_if(Pred&& counted) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      std::shared_lock guard{shards_[i].mutex};
      for (const auto& s : shards_[i].order) n += counted(s.value) ? 1 : 0;
    }
    return n;
  }

  std::size_t size() const {
    return count_if([](const Value&) { return true; });
  }

  std::size_t budget_per_shard() const { return budget_per_shard_; }

private:
  struct slot {
    std::string key;
    Value value;
  };
  struct shard {
    mutable std::shared_mutex mutex;
    mutable std::list<slot> order;  ///< most recently read first
    std::unordered_map<std::string_view, typename std::list<slot>::iterator> index;
    std::size_t bytes = 0;
  };

  static std::size_t cost(const slot& s) { return Cost{}(s.key, s.value); }
  shard& of(std::string_view key) const { return shards_[std::hash<std::string_view>{}(key) % count_]; }
  void erase(shard& s, typename std::list<slot>::iterator at) {
    s.bytes -= cost(*at);
    s.index.erase(at->key);
    s.order.erase(at);
  }

  std::size_t count_;
  std::size_t budget_per_shard_;
  std::unique_ptr<shard[]> shards_;
};

}  // namespace cl::domain
