#include "storage/kv/memory_store.hpp"

#include "storage/kv/kv.hpp"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace cl::storage {

namespace {

using table_map = std::map<std::string, std::string, std::less<>>;
using overlay_map = std::map<std::string, std::optional<std::string>, std::less<>>;  ///< nullopt: erased

bool has_prefix(std::string_view key, std::string_view prefix) {
  return key.substr(0, prefix.size()) == prefix;
}

/// Where a scan of `m` starts: after `after`, or at `prefix` when `after` is empty.
template <class Map>
auto scan_start(const Map& m, std::string_view prefix, std::string_view after) {
  return after.empty() ? m.lower_bound(prefix) : m.upper_bound(after);
}

/// Committed state: a map per table, read under a shared lock, changed under an exclusive one.
class memory_engine final : public kv::engine {
public:
  memory_engine() : tables_(kv::table_names().size()) {}

  std::optional<std::string> get(kv::table t, std::string_view key) const override {
    std::shared_lock lock{mutex_};
    const auto& m = tables_.at(t.index);
    auto found = m.find(key);
    if (found == m.end()) return std::nullopt;
    return found->second;
  }
  kv::rows scan(kv::table t, std::string_view prefix, std::string_view after, std::size_t limit) const override {
    std::shared_lock lock{mutex_};
    const auto& m = tables_.at(t.index);
    kv::rows out;
    for (auto i = scan_start(m, prefix, after); i != m.end() && out.size() < limit && has_prefix(i->first, prefix); ++i)
      out.emplace_back(i->first, i->second);
    return out;
  }
  std::size_t entries(kv::table t) const override {
    std::shared_lock lock{mutex_};
    return tables_.at(t.index).size();
  }
  std::optional<std::string> last_key(kv::table t) const override {
    std::shared_lock lock{mutex_};
    const auto& m = tables_.at(t.index);
    if (m.empty()) return std::nullopt;
    return m.rbegin()->first;
  }
  std::unique_ptr<kv::transaction> begin() override;

  /// Makes a top-level transaction's writes committed state.
  void publish(const std::vector<overlay_map>& writes) {
    std::unique_lock lock{mutex_};
    for (std::size_t t = 0; t < writes.size(); ++t)
      for (const auto& [key, value] : writes[t]) {
        if (value) tables_[t].insert_or_assign(key, *value);
        else tables_[t].erase(key);
      }
  }

private:
  mutable std::shared_mutex mutex_;
  std::vector<table_map> tables_;  ///< by table index
};

/// A transaction: its writes over what lies below (its parent transaction, or committed state).
class memory_txn final : public kv::transaction {
public:
  memory_txn(memory_engine& e, memory_txn* parent) : e_(e), parent_(parent), writes_(kv::table_names().size()) {}

  std::optional<std::string> get(kv::table t, std::string_view key) const override {
    const auto& m = writes_.at(t.index);
    if (auto found = m.find(key); found != m.end()) return found->second;
    return below().get(t, key);
  }

  /// Merges this transaction's writes in the range with what lies below. Each erase here hides at
  /// most one entry below, so `limit` + (erases in range) entries from below are enough.
  kv::rows scan(kv::table t, std::string_view prefix, std::string_view after, std::size_t limit) const override {
    const auto& m = writes_.at(t.index);
    std::vector<overlay_map::const_iterator> mine;
    std::size_t erased = 0;
    for (auto i = scan_start(m, prefix, after); i != m.end() && has_prefix(i->first, prefix); ++i) {
      mine.push_back(i);
      if (!i->second) ++erased;
    }
    auto lower = below().scan(t, prefix, after, limit + erased);
    kv::rows out;
    std::size_t a = 0, b = 0;
    while (out.size() < limit && (a < mine.size() || b < lower.size())) {
      bool take_mine = b == lower.size() || (a < mine.size() && mine[a]->first <= lower[b].first);
      if (!take_mine) {
        out.push_back(std::move(lower[b++]));
        continue;
      }
      if (b < lower.size() && mine[a]->first == lower[b].first) ++b;  // this transaction's write wins
      if (mine[a]->second) out.emplace_back(mine[a]->first, *mine[a]->second);
      ++a;
    }
    return out;
  }

  std::size_t entries(kv::table t) const override {
    auto n = below().entries(t);
    for (const auto& [key, value] : writes_.at(t.index)) {
      bool existed = below().get(t, key).has_value();
      if (value && !existed) ++n;
      if (!value && existed) --n;
    }
    return n;
  }

  void put(kv::table t, std::string_view key, std::string_view value) override {
    writes_.at(t.index).insert_or_assign(std::string{key}, std::string{value});
  }
  void erase(kv::table t, std::string_view key) override { writes_.at(t.index).insert_or_assign(std::string{key}, std::nullopt); }

  std::unique_ptr<kv::transaction> child() override { return std::make_unique<memory_txn>(e_, this); }

  void commit() override {
    if (!parent_) return e_.publish(writes_);
    for (std::size_t t = 0; t < writes_.size(); ++t)
      for (auto& [key, value] : writes_[t]) parent_->writes_[t].insert_or_assign(key, std::move(value));
    writes_.clear();
  }

private:
  const kv::reader& below() const { return parent_ ? static_cast<const kv::reader&>(*parent_) : e_; }

  memory_engine& e_;
  memory_txn* parent_;
  std::vector<overlay_map> writes_;  ///< by table index
};

std::unique_ptr<kv::transaction> memory_engine::begin() {
  return std::make_unique<memory_txn>(*this, nullptr);
}

}  // namespace

std::shared_ptr<record_store> open_memory_store() {
  return kv::make_record_store(std::make_unique<memory_engine>(), "memory (kept in this process only)");
}

}  // namespace cl::storage
