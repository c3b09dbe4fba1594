#pragma once
/// Bounded walks over ids in order, the same on every backend (storage-internal): a stream reads
/// candidates in chunks from an index (a key range, an `ORDER BY id LIMIT` query), a walk keeps
/// those a filter accepts until the page is full or the query's budget of candidates is spent,
/// and a merged walk does so over the union of several streams (one per principal), each id once.
/// A page costs the candidates it examines, whatever else the tenant holds.

#include "storage/record_store.hpp"

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cl::storage::walks {

/// Ids (and what the index holds for each) after a given id, in order, read in chunks.
template <class Item>
class id_stream {
public:
  using chunk = std::vector<std::pair<std::string, Item>>;
  /// Reads up to `n` entries after `after` (from the start when empty), in id order.
  using fetcher = std::function<chunk(const std::string& after, std::size_t n)>;

  id_stream(fetcher fetch, std::string after, std::size_t chunk_size = 128)
    : fetch_(std::move(fetch)), after_(std::move(after)), chunk_size_(chunk_size) {
    fill();
  }
  bool done() const { return buffer_.empty(); }
  const std::string& current() const { return buffer_.front().first; }
  const Item& value() const { return buffer_.front().second; }
  void advance() {
    buffer_.pop_front();
    if (buffer_.empty() && !exhausted_) fill();
  }

private:
  void fill() {
    auto got = fetch_(after_, chunk_size_);
    exhausted_ = got.size() < chunk_size_;
    if (!got.empty()) after_ = got.back().first;
    for (auto& entry : got) buffer_.push_back(std::move(entry));
  }
  fetcher fetch_;
  std::string after_;
  std::size_t chunk_size_;
  std::deque<std::pair<std::string, Item>> buffer_;
  bool exhausted_ = false;
};

/// Walks `ids` keeping what `keep(id, item)` returns a record for, within the query's bounds.
template <class Item, class Keep>
record_page walk(id_stream<Item>& ids, std::size_t limit, std::size_t budget, const Keep& keep) {
  record_page page;
  std::size_t examined = 0;
  for (; !ids.done() && page.entries.size() < limit && examined < budget; ids.advance()) {
    ++examined;
    page.resume_after = ids.current();
    if (auto record = keep(ids.current(), ids.value())) page.entries.emplace_back(ids.current(), std::move(*record));
  }
  page.exhausted = ids.done();
  page.examined = examined;
  return page;
}

/// Walks the union of `streams` (each in id order) in id order, each id once, keeping what
/// `keep(id, item)` returns a record for (the item of the first stream that holds the id).
template <class Item, class Keep>
record_page merged_walk(std::vector<id_stream<Item>>& streams, std::size_t limit, std::size_t budget,
                        const Keep& keep) {
  record_page page;
  std::size_t examined = 0;
  for (;;) {
    id_stream<Item>* next = nullptr;
    for (auto& s : streams)
      if (!s.done() && (!next || s.current() < next->current())) next = &s;
    if (!next) {
      page.exhausted = true;
      break;
    }
    if (page.entries.size() >= limit || examined >= budget) break;
    std::string id = next->current();
    auto record = keep(id, next->value());
    for (auto& s : streams)
      if (!s.done() && s.current() == id) s.advance();
    ++examined;
    page.resume_after = id;
    if (record) page.entries.emplace_back(id, std::move(*record));
  }
  page.examined = examined;
  return page;
}

}  // namespace cl::storage::walks
