#include "storage/kv/kv.hpp"

#include "domain/aead.hpp"
#include "domain/base64url.hpp"
#include "domain/clock.hpp"
#include "storage/commit_listeners.hpp"
#include "storage/content_stores.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>

namespace cl::storage::kv {

namespace {

struct table_registry {
  std::mutex mutex;
  std::vector<std::string> names;
};

table_registry& tables_declared() {
  static table_registry r;
  return r;
}

const store_registry<context>& implementations() { return store_registry<context>::of(); }

std::unique_ptr<typed_store> make_store(std::size_t slot, const context& c) {
  return implementations().make(slot, c);
}

const table changes = declare_table("changes");                    ///< big-endian sequence -> change entry
/// consumer name -> 8-byte applied sequence, then 8-byte time of acknowledgement (ms; absent in older records)
const table change_consumers = declare_table("change_consumers");
/// The data dir's facts (LMDB's format version, storage/kv/lmdb_store.cpp; the deployment's identity).
const table meta = declare_table("meta");
constexpr std::string_view deployment_key = "deployment_id";

/// A transaction's writes, counted (`write_txn::writes`).
class counting_writer final : public writer {
public:
  explicit counting_writer(transaction& t) : t_(t) {}
  std::optional<std::string> get(table t, std::string_view key) const override { return t_.get(t, key); }
  rows scan(table t, std::string_view prefix, std::string_view after, std::size_t limit) const override {
    return t_.scan(t, prefix, after, limit);
  }
  std::size_t entries(table t) const override { return t_.entries(t); }
  void put(table t, std::string_view key, std::string_view value) override {
    ++count;
    t_.put(t, key, value);
  }
  void erase(table t, std::string_view key) override {
    ++count;
    t_.erase(t, key);
  }
  void append(table t, std::string_view key, std::string_view value) override {
    ++count;
    t_.append(t, key, value);
  }
  std::uint64_t count = 0;

private:
  transaction& t_;
};

/// What one mutation sees: the typed stores over its (nested) transaction, made when first asked for.
class kv_write_view final : public write_txn {
public:
  kv_write_view(transaction& t, std::uint64_t& next_seq) : writes_(t), next_seq_(next_seq) {}

  std::uint64_t writes() const override { return writes_.count; }

  std::uint64_t last_logged() const override { return next_seq_ - 1; }

  void log_change(const change_entry& entry) override {
    auto seq = next_seq_++;
    if (first_ == 0) first_ = seq;
    auto stamped = entry;
    stamped.transaction = first_;
    writes_.append(changes, big_endian_key(seq), encode_change(stamped));
  }

  void acknowledge_changes(std::string_view name, std::uint64_t applied) override {
    writes_.put(change_consumers, name,
                big_endian_key(applied) + big_endian_key(static_cast<std::uint64_t>(domain::now_ms())));
  }

  void forget_consumer(std::string_view name) override { writes_.erase(change_consumers, name); }

  void prune_changes(std::int64_t cutoff_ms, std::size_t limit) override {
    // Nothing a registered consumer still needs goes, however old.
    std::uint64_t needed_after = UINT64_MAX;
    for (const auto& [name, applied] : writes_.scan(change_consumers, "", "", 100000))
      needed_after = std::min(needed_after, big_endian_value(std::string_view{applied}.substr(0, 8)));
    auto oldest = writes_.scan(changes, "", "", limit + 1);
    // The newest entry always stays: the sequence continues from it after a restart.
    if (oldest.size() <= limit && !oldest.empty()) oldest.pop_back();
    if (oldest.size() > limit) oldest.resize(limit);
    for (const auto& [key, value] : oldest) {
      auto seq = big_endian_value(key);
      auto e = decode_change(seq, value);
      // Format-1 entries carry no time: they are pruned as old.
      if (seq > needed_after || (e && e->at_ms != 0 && e->at_ms >= cutoff_ms)) break;
      writes_.erase(changes, key);
    }
  }

  writer& raw() { return writes_; }

protected:
  const typed_store& find_store(store_kind kind) const override { return at(kind); }
  typed_store& find_store_to_write(store_kind kind) override { return at(kind); }

private:
  typed_store& at(store_kind kind) const {
    if (stores_.size() <= kind.slot) stores_.resize(kind.slot + 1);
    auto& s = stores_[kind.slot];
    if (!s) s = make_store(kind.slot, context{writes_, &writes_, *this, &next_seq_});
    return *s;
  }

  mutable counting_writer writes_;
  std::uint64_t& next_seq_;
  std::uint64_t first_ = 0;  ///< the sequence of this mutation's first entry
  mutable std::vector<std::unique_ptr<typed_store>> stores_;
};

/// The record store over an engine: every registered store over committed state, the group commit
/// with one nested transaction per mutation, and the change log's sequence and listeners.
class kv_record_store final : public record_store {
public:
  kv_record_store(std::unique_ptr<engine> e, std::string description)
      : engine_(std::move(e)), description_(std::move(description)) {
    if (auto id = engine_->get(meta, deployment_key)) {
      deployment_ = *id;
    } else if (!engine_->read_only()) {
      adopt_deployment_id(domain::hex_encode(domain::random_bytes(16)));
    }
    for (std::size_t slot = 0; slot < implementations().size(); ++slot)
      stores_.push_back(implementations().has(slot) ? make_store(slot, context{*engine_, nullptr, *this}) : nullptr);
    auto last = engine_->last_key(changes);
    next_seq_ = (last ? big_endian_value(*last) : 0) + 1;
    committed_.store(next_seq_ - 1);
  }

  const engine& raw() const { return *engine_; }

  std::string describe() const override { return description_; }

  std::string deployment_id() const override { return deployment_; }

  void adopt_deployment_id(const std::string& id) override {
    auto tx = engine_->begin();
    tx->put(meta, deployment_key, id);
    tx->commit();
    deployment_ = id;
  }

  std::vector<bool> apply(const std::vector<mutation>& batch) override {
    std::vector<bool> kept(batch.size(), false);
    auto group = engine_->begin();
    std::uint64_t seq = next_seq_;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto child = group->child();
      std::uint64_t before = seq;
      bool keep = false;
      {
        kv_write_view view{*child, seq};
        try {
          keep = batch[i](view);
        } catch (const store_full&) {
          throw;  // no room: the whole group fails (its transaction is aborted), not this mutation alone
        } catch (const std::exception&) {
          keep = false;  // a throwing mutation loses only its own changes
        }
      }
      if (keep) {
        child->commit();
        kept[i] = true;
      } else {
        seq = before;
      }
    }
    group->commit();  // one durable commit (one fsync) for the whole group
    bool logged = seq != next_seq_;
    next_seq_ = seq;
    committed_.store(seq - 1);
    if (logged) listeners_.notify(seq - 1);
    return kept;
  }

  std::uint64_t last_change() const override { return committed_.load(); }

  instant_resource resource_at_once(const std::string& tenant, const std::string& id) const override {
    instant_resource out;
    out.log_position = known_change();  // before the read: the record is at least that recent
    out.record = resources().get(tenant, id);
    out.answered = true;
    return out;
  }

  std::pair<std::uint64_t, std::uint64_t> space() const override { return engine_->space(); }

  std::vector<change_entry> read_from(std::uint64_t after, std::size_t limit) const override {
    std::vector<change_entry> out;
    // Only committed entries: the engine reads committed state, and `committed_` bounds a commit
    // that is being published.
    for (const auto& [key, value] : engine_->scan(changes, "", big_endian_key(after), limit))
      if (auto e = decode_change(big_endian_value(key), value)) out.push_back(std::move(*e));
    return out;
  }

  std::uint64_t subscribe(commit_listener listener) override { return listeners_.add(std::move(listener)); }

  void unsubscribe(std::uint64_t handle) override { listeners_.remove(handle); }

  std::vector<change_consumer> consumers() const override {
    std::vector<change_consumer> out;
    for (const auto& [name, value] : engine_->scan(change_consumers, "", "", 100000)) {
      std::string_view v{value};
      out.push_back({name, big_endian_value(v.substr(0, 8)),
                     v.size() >= 16 ? static_cast<std::int64_t>(big_endian_value(v.substr(8, 8))) : 0});
    }
    return out;
  }

protected:
  const typed_store& find_store(store_kind kind) const override {
    if (kind.slot >= stores_.size() || !stores_[kind.slot])
      throw std::logic_error("a typed store has no key-value implementation linked in (storage/kv/)");
    return *stores_[kind.slot];
  }

private:
  std::unique_ptr<engine> engine_;
  std::string description_;
  std::string deployment_;  ///< `deployment_id`
  std::vector<std::unique_ptr<typed_store>> stores_;  ///< by slot, over committed state
  std::uint64_t next_seq_ = 1;  ///< touched only by `apply` (one writer) and the constructor
  std::atomic<std::uint64_t> committed_{0};  ///< last committed sequence, read by any thread
  commit_listeners listeners_;
};

}  // namespace

table declare_table(std::string_view name) {
  auto& r = tables_declared();
  std::lock_guard<std::mutex> guard{r.mutex};
  auto found = std::find(r.names.begin(), r.names.end(), name);
  if (found != r.names.end()) return table{static_cast<std::uint16_t>(found - r.names.begin())};
  r.names.emplace_back(name);
  return table{static_cast<std::uint16_t>(r.names.size() - 1)};
}

std::vector<std::string> table_names() {
  auto& r = tables_declared();
  std::lock_guard<std::mutex> guard{r.mutex};
  return r.names;
}

table changes_table() { return changes; }

std::shared_ptr<record_store> make_record_store(std::unique_ptr<engine> engine, std::string description) {
  return std::make_shared<kv_record_store>(std::move(engine), std::move(description));
}

const engine& engine_of(const record_store& store) {
  return dynamic_cast<const kv_record_store&>(store).raw();
}

writer& writer_of(write_txn& tx) {
  return dynamic_cast<kv_write_view&>(tx).raw();
}

std::string big_endian_key(std::uint64_t n) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; --i, n >>= 8) k[static_cast<std::size_t>(i)] = static_cast<char>(n & 0xff);
  return k;
}

std::uint64_t big_endian_value(std::string_view key) {
  if (key.size() < 8) return 0;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < 8; ++i) n = (n << 8) | static_cast<unsigned char>(key[i]);
  return n;
}

std::string tenant_key(std::string_view tenant, std::string_view id) {
  std::string k;
  k.reserve(tenant.size() + 1 + id.size());
  k.append(tenant).push_back('\0');
  k.append(id);
  return k;
}

}  // namespace cl::storage::kv
