#include "actors/contracts.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

contracts_actor::behavior_type contracts(contracts_actor::stateful_pointer<contracts_state>,
                                         std::shared_ptr<storage::record_store> store) {
  return {
    [store](fetch_atom, const std::string& tenant, const std::string& id,
            std::int64_t version) -> caf::result<fetch_outcome> {
      try {
        auto json = version == 0 ? store->contracts().latest(tenant, id) : store->contracts().version(tenant, id, version);
        if (!json) return fetch_outcome{false, {}};
        return fetch_outcome{true, std::move(*json)};
      } catch (const std::exception& e) {
        spdlog::error("contracts: read failed: {}", e.what());
        return caf::make_error(caf::sec::runtime_error, "storage read failed");
      }
    },
    [store](list_atom, const storage::contract_query& q) -> caf::result<scan_result> {
      try {
        auto page = store->contracts().list(q);
        return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted};
      } catch (const std::exception& e) {
        spdlog::error("contracts: list failed: {}", e.what());
        return caf::make_error(caf::sec::runtime_error, "storage read failed");
      }
    },
    [store](list_atom, const storage::contract_versions_query& q) -> caf::result<scan_result> {
      try {
        auto page = store->contracts().versions(q);
        return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted};
      } catch (const std::exception& e) {
        spdlog::error("contracts: versions failed: {}", e.what());
        return caf::make_error(caf::sec::runtime_error, "storage read failed");
      }
    },
  };
}

}  // namespace cl::actors
