#include "storage/ledger_store.hpp"

#include "domain/idempotency.hpp"
#include "storage/record_store.hpp"

namespace cl::storage {

namespace {

/// Key layout: `ledger` tenant\0client\0key -> record; `ledger_expiry` <8-byte created_ms> + that
/// key -> "" (records in age order).
std::string expiry_key(std::int64_t created_ms, std::string_view key) {
  return big_endian_key(static_cast<std::uint64_t>(created_ms)) + std::string{key};
}

class kv_ledger_store final : public ledger_writes {
public:
  kv_ledger_store(const read_view& reads, write_txn* writes) : r_(reads), w_(writes) {}

  std::optional<std::string> record(std::string_view key) const override { return r_.get(table::ledger, key); }

  bool prune_due(std::int64_t cutoff_ms) const override {
    auto oldest = r_.scan(table::ledger_expiry, "", "", 1);
    return !oldest.empty() && oldest.front().first.compare(0, 8, big_endian_key(static_cast<std::uint64_t>(cutoff_ms))) < 0;
  }

  void put(std::string_view key, std::int64_t created_ms, std::string_view record) override {
    w_->put(table::ledger, key, record);
    w_->put(table::ledger_expiry, expiry_key(created_ms, key), "");
  }

  void drop_expired(std::string_view key, std::int64_t created_ms) override {
    w_->erase(table::ledger_expiry, expiry_key(created_ms, key));
  }

  void prune(std::int64_t cutoff_ms, std::size_t limit) override {
    auto cutoff = big_endian_key(static_cast<std::uint64_t>(cutoff_ms));
    for (const auto& [key, value] : r_.scan(table::ledger_expiry, "", "", limit)) {
      if (key.compare(0, 8, cutoff) >= 0) break;  // in time order: the rest is younger
      auto ledger = std::string_view{key}.substr(8);
      // A key reused after expiry has a younger record: only remove the one this entry is about.
      if (auto stored = r_.get(table::ledger, ledger)) {
        auto parsed = domain::parse_ledger_record(*stored);
        if (!parsed || big_endian_key(static_cast<std::uint64_t>(parsed->created_ms)) == key.substr(0, 8))
          w_->erase(table::ledger, ledger);
      }
      w_->erase(table::ledger_expiry, key);
    }
  }

private:
  const read_view& r_;
  write_txn* w_;
};

}  // namespace

std::string ledger_key(std::string_view tenant, std::string_view client_id, std::string_view key) {
  std::string out{tenant};
  out.push_back('\0');
  out.append(client_id).push_back('\0');
  out.append(key);
  return out;
}

std::unique_ptr<ledger_writes> make_kv_ledger_store(const read_view& reads, write_txn* writes) {
  return std::make_unique<kv_ledger_store>(reads, writes);
}

}  // namespace cl::storage
