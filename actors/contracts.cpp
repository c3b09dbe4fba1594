#include "actors/contracts.hpp"

#include "domain/json_text.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

std::string contract_version_key(const std::string& tenant, const std::string& id, std::int64_t version) {
  return storage::tenant_key(tenant, id + '\0' + storage::big_endian_key(static_cast<std::uint64_t>(version)));
}

std::vector<std::string> contract_records_for_work(const storage::record_store& store, const std::string& tenant,
                                                   const std::string& work_id) {
  std::vector<std::string> out;
  auto prefix = storage::tenant_key(tenant, work_id + '\0');
  for (const auto& [key, value] : store.scan(storage::table::contract_works, prefix, {}, 1000)) {
    auto contract_id = key.substr(prefix.size());
    auto record = store.get(storage::table::contracts, storage::tenant_key(tenant, contract_id));
    // A later version may have dropped the Work: only a version that lists it counts.
    if (record && record->find(domain::json_string(work_id)) != std::string::npos) out.push_back(std::move(*record));
  }
  return out;
}

std::vector<std::string> contract_records_for_work(const storage::write_txn& tx, const std::string& tenant,
                                                   const std::string& work_id) {
  std::vector<std::string> out;
  auto prefix = storage::tenant_key(tenant, work_id + '\0');
  for (const auto& [key, value] : tx.scan(storage::table::contract_works, prefix, 1000)) {
    auto record = tx.get(storage::table::contracts, storage::tenant_key(tenant, key.substr(prefix.size())));
    if (record && record->find(domain::json_string(work_id)) != std::string::npos) out.push_back(std::move(*record));
  }
  return out;
}

contracts_actor::behavior_type contracts(contracts_actor::stateful_pointer<contracts_state>,
                                         std::shared_ptr<storage::record_store> store) {
  return {
    [store](fetch_atom, const std::string& tenant, const std::string& id,
            std::int64_t version) -> caf::result<fetch_outcome> {
      try {
        auto json = version == 0 ? store->get(storage::table::contracts, storage::tenant_key(tenant, id))
                                 : store->get(storage::table::contract_versions, contract_version_key(tenant, id, version));
        if (!json) return fetch_outcome{false, {}};
        return fetch_outcome{true, std::move(*json)};
      } catch (const std::exception& e) {
        spdlog::error("contracts: read failed: {}", e.what());
        return caf::make_error(caf::sec::runtime_error, "storage read failed");
      }
    },
  };
}

}  // namespace cl::actors
