#include "storage/stores.hpp"

#include "domain/text.hpp"

#include <atomic>

namespace cl::storage {

namespace {
std::atomic<std::size_t> next_kind{0};
}

void require_storable(std::initializer_list<std::string_view> texts) {
  for (auto t : texts)
    if (auto problem = domain::text_problem(t)) throw value_unstorable("a key or value " + std::string{*problem});
}

store_kind next_store_kind() { return store_kind{next_kind++}; }

std::size_t store_kinds_count() { return next_kind.load(); }

const typed_store* read_view::store_at(std::size_t slot) const {
  try {
    return &find_store(store_kind{slot});
  } catch (const std::exception&) {
    return nullptr;  // no implementation of that store on this backend
  }
}

const contract_reads& read_view::contracts() const { return store<contract_reads>(); }
const grant_reads& read_view::grants() const { return store<grant_reads>(); }
const ledger_reads& read_view::ledger() const { return store<ledger_reads>(); }
const resource_reads& read_view::resources() const { return store<resource_reads>(); }
const activity_reads& read_view::activities() const { return store<activity_reads>(); }
const catalog_reads& read_view::catalog() const { return store<catalog_reads>(); }

contract_writes& write_txn::contracts() { return store<contract_writes>(); }
grant_writes& write_txn::grants() { return store<grant_writes>(); }
ledger_writes& write_txn::ledger() { return store<ledger_writes>(); }
resource_writes& write_txn::resources() { return store<resource_writes>(); }
activity_writes& write_txn::activities() { return store<activity_writes>(); }
catalog_writes& write_txn::catalog() { return store<catalog_writes>(); }

std::optional<std::string> record_store::get_resource(std::string_view tenant, std::string_view id) const {
  return resources().get(tenant, id);
}

mutation acknowledge_changes(std::string name, std::uint64_t applied) {
  return [name = std::move(name), applied](write_txn& tx) {
    tx.acknowledge_changes(name, applied);
    return true;
  };
}

mutation forget_consumer(std::string name) {
  return [name = std::move(name)](write_txn& tx) {
    tx.forget_consumer(name);
    return true;
  };
}

mutation prune_changes(std::int64_t cutoff_ms, std::size_t limit) {
  return [cutoff_ms, limit](write_txn& tx) {
    tx.prune_changes(cutoff_ms, limit);
    return true;
  };
}

}  // namespace cl::storage
