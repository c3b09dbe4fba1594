#include "storage/postgresql/hot_records.hpp"

#include <functional>

namespace cl::storage::pg {

hot_records::hot_records(std::size_t budget, std::size_t shards)
  : budget_per_shard_(budget / (shards == 0 ? 1 : shards)),
    shards_(std::make_unique<shard[]>(shards == 0 ? 1 : shards)),
    count_(shards == 0 ? 1 : shards) {}

std::string hot_records::key(std::string_view tenant, std::string_view id) {
  std::string k{tenant};
  k.push_back('\0');
  return k.append(id);
}

hot_records::shard& hot_records::of(std::string_view key) const {
  return shards_[std::hash<std::string_view>{}(key) % count_];
}

std::size_t hot_records::cost(const slot& s) {
  std::size_t n = 2 * s.key.size() + 160;  // list node, map slot, strings
  if (!s.value) return n;
  const auto& e = *s.value;
  n += e.record.size() + e.header.work_id.size() + e.header.type.size() + e.header.language.size()
       + e.header.version.size();
  for (const auto& b : e.header.blobs) n += b.size() + 32;
  return n;
}

void hot_records::erase(shard& s, std::list<slot>::iterator at) {
  s.bytes -= cost(*at);
  s.index.erase(at->key);
  s.order.erase(at);
}

void hot_records::evict(shard& s) {
  while (s.bytes > budget_per_shard_ && !s.order.empty()) erase(s, std::prev(s.order.end()));
}

std::uint64_t hot_records::reserve(const std::string& key) {
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  if (auto it = s.index.find(key); it != s.index.end()) return it->second->token;  // reserved or filled since
  s.order.push_front(slot{key, std::nullopt, ++s.tokens});
  s.index.emplace(s.order.front().key, s.order.begin());
  s.bytes += cost(s.order.front());
  auto token = s.order.front().token;
  evict(s);
  return token;
}

std::optional<hot_records::entry> hot_records::find(std::string_view key) const {
  if (current_ && !current_()) return std::nullopt;  // lagging the log: read the database
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  auto it = s.index.find(key);
  if (it == s.index.end() || !it->second->value) return std::nullopt;
  s.order.splice(s.order.begin(), s.order, it->second);  // read lately: last out
  return *it->second->value;
}

void hot_records::put(const std::string& key, entry e, std::uint64_t token) {
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  auto it = s.index.find(key);
  // Dropped since the read began (the reservation is gone or is a newer one), or filled by another
  // read begun after the same reservation: nothing to keep.
  if (it == s.index.end() || it->second->token != token || it->second->value) return;
  auto at = it->second;
  s.bytes -= cost(*at);
  at->value = std::move(e);
  s.bytes += cost(*at);
  s.order.splice(s.order.begin(), s.order, at);
  if (cost(*at) > budget_per_shard_) return erase(s, at);  // answered, never kept
  evict(s);
}

void hot_records::drop(std::string_view key) {
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  if (auto it = s.index.find(key); it != s.index.end()) erase(s, it->second);
}

void hot_records::clear() {
  for (std::size_t i = 0; i < count_; ++i) {
    auto& s = shards_[i];
    std::lock_guard<std::mutex> guard{s.mutex};
    s.index.clear();
    s.order.clear();
    s.bytes = 0;
  }
}

std::size_t hot_records::bytes() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    std::lock_guard<std::mutex> guard{shards_[i].mutex};
    n += shards_[i].bytes;
  }
  return n;
}

std::size_t hot_records::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    std::lock_guard<std::mutex> guard{shards_[i].mutex};
    for (const auto& s : shards_[i].order) n += s.value ? 1 : 0;
  }
  return n;
}

}  // namespace cl::storage::pg
