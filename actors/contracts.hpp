#pragma once
/// The contracts actor: reads of contract versions for the contracts route group
/// (`/v0/contracts`, plans in actors/contract_plans.cpp). Writes go through the writer like every
/// other mutation. `contract_records_for_work` is the lookup the rights resolver uses.

#include "actors/interfaces.hpp"
#include "storage/record_store.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace cl::actors {

struct contracts_state {
  static constexpr const char* name = "contracts";
};

contracts_actor::behavior_type contracts(contracts_actor::stateful_pointer<contracts_state> self,
                                         std::shared_ptr<storage::record_store> store);

/// The latest version of every contract of `tenant` that lists `work_id` now.
std::vector<std::string> contract_records_for_work(const storage::record_store& store, const std::string& tenant,
                                                   const std::string& work_id);

/// The same, as the write transaction `tx` sees it (answers of writes resolve rights inside it).
std::vector<std::string> contract_records_for_work(const storage::write_txn& tx, const std::string& tenant,
                                                   const std::string& work_id);

/// Key of version `version` of contract `id` in `contract_versions`.
std::string contract_version_key(const std::string& tenant, const std::string& id, std::int64_t version);

}  // namespace cl::actors
