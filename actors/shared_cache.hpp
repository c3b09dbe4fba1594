#pragma once
/// A bounded, sharded map from string keys to values that expire, shared between one writing
/// concern actor and the coordinators that read it in place.
///
/// This is how the hot read path saves hops: a cache inside an actor still costs a message round
/// trip per request, so an actor that owns a cacheable answer (verified tokens, resolved rights)
/// publishes it here and stays the only place that computes it. Readers that miss ask the actor.
///
/// Readers share a shard's lock and never wait for one another, only for a writer: a reader that
/// the scheduler preempts while it copies a value out holds up no other reader (on a machine with
/// fewer cores than busy threads, a waiter would wait for the holder's next time slice).

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace cl::actors {

template <class Value>
class shared_cache {
public:
  /// Holds at most about `capacity` entries; 0 disables caching.
  explicit shared_cache(std::size_t capacity)
    : per_shard_(capacity == 0 ? 0 : (capacity + shard_count - 1) / shard_count) {}

  /// The value of `key` if present and `now < valid_until`.
  std::optional<Value> find(const std::string& key, std::int64_t now) const {
    if (per_shard_ == 0) return std::nullopt;
    const auto& s = shard_for(key);
    std::shared_lock guard{s.mutex};
    auto hit = s.entries.find(key);
    if (hit == s.entries.end() || hit->second.valid_until <= now) return std::nullopt;
    return hit->second.value;
  }

  /// Keeps `value` for `key` until `valid_until` (exclusive). A full shard first drops what
  /// expired, then everything.
  void insert(std::string key, Value value, std::int64_t valid_until, std::int64_t now) {
    if (per_shard_ == 0 || valid_until <= now) return;
    auto& s = shard_for(key);
    std::lock_guard guard{s.mutex};
    if (s.entries.size() >= per_shard_ && s.entries.find(key) == s.entries.end()) {
      for (auto i = s.entries.begin(); i != s.entries.end();)
        i = i->second.valid_until <= now ? s.entries.erase(i) : std::next(i);
      if (s.entries.size() >= per_shard_) s.entries.clear();
    }
    s.entries.insert_or_assign(std::move(key), entry{std::move(value), valid_until});
  }

  void clear() {
    for (auto& s : shards_) {
      std::lock_guard guard{s.mutex};
      s.entries.clear();
    }
  }

  std::size_t size() const {
    std::size_t n = 0;
    for (const auto& s : shards_) {
      std::shared_lock guard{s.mutex};
      n += s.entries.size();
    }
    return n;
  }

private:
  static constexpr std::size_t shard_count = 16;
  struct entry {
    Value value;
    std::int64_t valid_until = 0;
  };
  struct shard {
    mutable std::shared_mutex mutex;
    std::unordered_map<std::string, entry> entries;
  };
  const shard& shard_for(const std::string& key) const { return shards_[std::hash<std::string>{}(key) % shard_count]; }
  shard& shard_for(const std::string& key) { return shards_[std::hash<std::string>{}(key) % shard_count]; }

  std::size_t per_shard_;
  std::array<shard, shard_count> shards_;
};

}  // namespace cl::actors
