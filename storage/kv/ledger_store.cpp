#include "storage/ledger_store.hpp"

#include "domain/idempotency.hpp"
#include "storage/kv/kv.hpp"
#include "storage/kv/ledger_keys.hpp"
#include "storage/stores.hpp"

namespace cl::storage {

using kv::big_endian_key;
using kv::tenant_key;

/// The tables this file owns or reads (declared by name: another file naming one shares it).
namespace tables {
const kv::table ledger = kv::declare_table("ledger");
const kv::table ledger_expiry = kv::declare_table("ledger_expiry");
}  // namespace tables

namespace {

/// Key layout: `ledger` tenant\0client\0key -> record (a longer key under its digest:
/// storage/kv/ledger_keys.hpp); `ledger_expiry` <8-byte created_ms> + that key -> "" (records in age
/// order).
std::string record_key(const domain::ledger_key& k) {
  return kv_ledger::stored_key(k);
}

std::string expiry_key(std::int64_t created_ms, const domain::ledger_key& key) {
  return big_endian_key(static_cast<std::uint64_t>(created_ms)) + record_key(key);
}

class kv_ledger_store final : public ledger_writes {
public:
  explicit kv_ledger_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<std::string> record(const domain::ledger_key& key) const override {
    require_storable({key.tenant, key.client_id, key.key});
    auto stored = record_key(key);
    auto value = r_.get(tables::ledger, stored);
    if (!value || !kv_ledger::hashed(stored)) return value;
    auto entry = kv_ledger::read_entry(stored, *value);
    if (!entry || entry->key.tenant != key.tenant || entry->key.client_id != key.client_id || entry->key.key != key.key)
      return std::nullopt;  // another key under the same digest: never its answer
    return std::string{entry->record};
  }

  std::size_t records() const override { return r_.entries(tables::ledger); }

  bool prune_due(std::int64_t cutoff_ms) const override {
    auto oldest = r_.scan(tables::ledger_expiry, "", "", 1);
    return !oldest.empty() && oldest.front().first.compare(0, 8, big_endian_key(static_cast<std::uint64_t>(cutoff_ms))) < 0;
  }

  void put(const domain::ledger_key& key, std::int64_t created_ms, std::string_view record) override {
    require_storable({key.tenant, key.client_id, key.key, record});
    w_->put(tables::ledger, record_key(key), kv_ledger::stored_value(key, record));
    w_->put(tables::ledger_expiry, expiry_key(created_ms, key), "");
  }

  void drop_expired(const domain::ledger_key& key, std::int64_t created_ms) override {
    require_storable({key.tenant, key.client_id, key.key});
    w_->erase(tables::ledger_expiry, expiry_key(created_ms, key));
  }

  void prune(std::int64_t cutoff_ms, std::size_t limit) override {
    auto cutoff = big_endian_key(static_cast<std::uint64_t>(cutoff_ms));
    for (const auto& [key, value] : r_.scan(tables::ledger_expiry, "", "", limit)) {
      if (key.compare(0, 8, cutoff) >= 0) break;  // in time order: the rest is younger
      auto ledger = std::string_view{key}.substr(8);
      // A key reused after expiry has a younger record: only remove the one this entry is about.
      if (auto stored = r_.get(tables::ledger, ledger)) {
        auto entry = kv_ledger::read_entry(ledger, *stored);
        auto parsed = entry ? domain::parse_ledger_record(entry->record) : std::nullopt;
        if (!parsed || big_endian_key(static_cast<std::uint64_t>(parsed->created_ms)) == key.substr(0, 8))
          w_->erase(tables::ledger, ledger);
      }
      w_->erase(tables::ledger_expiry, key);
    }
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

}  // namespace


const bool implemented = kv::implement<ledger_writes, kv_ledger_store>();

}  // namespace cl::storage
