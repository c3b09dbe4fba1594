#include "actors/representation_cache.hpp"

#include <functional>

namespace cl::actors {

representation_cache::representation_cache(std::size_t budget)
  : budget_per_shard_(budget / shard_count), shards_(new shard[shard_count]) {}

std::string representation_cache::key(std::string_view tenant, std::string_view id, std::string_view rendering) {
  std::string k;
  k.reserve(tenant.size() + id.size() + rendering.size() + 2);
  k.append(tenant).push_back('\0');
  k.append(id).push_back('\0');
  k.append(rendering);
  return k;
}

std::size_t representation_cache::slot::cost() const {
  // The strings, the rendering, and about 160 bytes of list node, index entry and control blocks.
  return key.size() * 2 + record.size() + rights_digest.size() + rights_json.size() + made->hash.size()
         + made->body.size() + 160;
}

representation_cache::shard& representation_cache::of(std::string_view key) const {
  return shards_[std::hash<std::string_view>{}(key) % shard_count];
}

std::shared_ptr<const representation_cache::rendering> representation_cache::find(const std::string& key,
                                                                                   const inputs& from) const {
  if (budget_per_shard_ == 0) return nullptr;
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  auto at = s.index.find(key);
  if (at == s.index.end()) return nullptr;
  const auto& e = *at->second;
  if (e.record != from.record || e.rights_digest != from.rights_digest || e.rights_json != from.rights_json)
    return nullptr;
  s.order.splice(s.order.begin(), s.order, at->second);
  return e.made;
}

void representation_cache::insert(const std::string& key, const inputs& from, std::shared_ptr<const rendering> made) {
  if (budget_per_shard_ == 0 || !made) return;
  slot fresh{key, std::string{from.record}, std::string{from.rights_digest}, std::string{from.rights_json}, std::move(made)};
  auto cost = fresh.cost();
  if (cost > budget_per_shard_) return;  // bigger than its shard: not kept
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  if (auto at = s.index.find(key); at != s.index.end()) {
    s.bytes -= at->second->cost();
    auto node = at->second;
    s.index.erase(at);
    s.order.erase(node);
  }
  while (!s.order.empty() && s.bytes + cost > budget_per_shard_) {
    auto& last = s.order.back();
    s.bytes -= last.cost();
    s.index.erase(last.key);
    s.order.pop_back();
  }
  s.order.push_front(std::move(fresh));
  s.index.emplace(s.order.front().key, s.order.begin());
  s.bytes += cost;
}

std::size_t representation_cache::bytes() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < shard_count; ++i) {
    std::lock_guard<std::mutex> guard{shards_[i].mutex};
    n += shards_[i].bytes;
  }
  return n;
}

std::size_t representation_cache::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < shard_count; ++i) {
    std::lock_guard<std::mutex> guard{shards_[i].mutex};
    n += shards_[i].index.size();
  }
  return n;
}

}  // namespace cl::actors
