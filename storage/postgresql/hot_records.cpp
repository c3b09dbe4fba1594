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

std::size_t hot_records::cost(const std::string& key, const entry& e) {
  std::size_t n = 2 * key.size() + e.record.size() + e.header.work_id.size() + e.header.type.size()
                  + e.header.language.size() + e.header.version.size() + 128;  // nodes, map slot, strings
  for (const auto& b : e.header.blobs) n += b.size() + 32;
  return n;
}

std::uint64_t hot_records::generation(std::string_view key) const {
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  return s.generation;
}

std::optional<hot_records::entry> hot_records::find(std::string_view key) const {
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  auto it = s.index.find(key);
  if (it == s.index.end()) return std::nullopt;
  s.order.splice(s.order.begin(), s.order, it->second);  // read lately: last out
  return it->second->second;
}

void hot_records::put(const std::string& key, entry e, std::uint64_t seen) {
  auto n = cost(key, e);
  if (n > budget_per_shard_) return;
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  if (s.generation != seen) return;  // a commit dropped something here since the read began
  if (auto it = s.index.find(key); it != s.index.end()) {
    s.bytes -= cost(it->second->first, it->second->second);
    auto node = it->second;
    s.index.erase(it);
    s.order.erase(node);
  }
  s.order.emplace_front(key, std::move(e));
  s.index.emplace(s.order.front().first, s.order.begin());
  s.bytes += n;
  while (s.bytes > budget_per_shard_) {
    auto& last = s.order.back();
    s.bytes -= cost(last.first, last.second);
    s.index.erase(last.first);
    s.order.pop_back();
  }
}

void hot_records::drop(std::string_view key) {
  auto& s = of(key);
  std::lock_guard<std::mutex> guard{s.mutex};
  ++s.generation;
  auto it = s.index.find(key);
  if (it == s.index.end()) return;
  s.bytes -= cost(it->second->first, it->second->second);
  auto node = it->second;
  s.index.erase(it);
  s.order.erase(node);
}

void hot_records::clear() {
  for (std::size_t i = 0; i < count_; ++i) {
    auto& s = shards_[i];
    std::lock_guard<std::mutex> guard{s.mutex};
    ++s.generation;
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
    n += shards_[i].index.size();
  }
  return n;
}

}  // namespace cl::storage::pg
