#pragma once
/// The contract store: every version of each contract, its latest version, and the exact index of
/// which contracts list a Work. It owns the key layout and the encoding (a small typed header with
/// the status and the Works, beside the canonical JSON), so no caller searches stored JSON.
///
/// SQL mapping (storage/postgresql/): `contract_versions(tenant, id,
/// version, status, record)` with primary key (tenant, id, version); `contracts_latest` as a view
/// or a table keyed (tenant, id); `contract_works(tenant, work_id, contract_id)` keyed in that order.
/// `for_work` = join of contract_works and contracts_latest; `list` = `WHERE tenant = $1 AND
/// (status = $2 OR $2 IS NULL) AND id > $after ORDER BY id LIMIT $limit` (by work through the
/// index); `put_version` = one INSERT of the version, an UPSERT of the latest, the index rows
/// of the Works added and removed, and `INSERT ... ON CONFLICT DO NOTHING` into
/// `contract_usages(tenant, usage_type, status)` for each usage term it names (`usages_named`).

#include "storage/copyable.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::storage {

struct record_page;

/// The latest versions of a tenant's contracts in id order, filtered.
struct contract_query {
  std::string tenant;
  std::string status;   ///< empty: any
  std::string work_id;  ///< empty: any; else only contracts whose latest version lists it
  std::string after;    ///< resume after this contract id
  std::size_t limit = 50;
  std::size_t budget = 10000;  ///< candidates examined at most
};

/// Every version of one contract, oldest first; entry ids are the version numbers in decimal.
struct contract_versions_query {
  std::string tenant;
  std::string id;
  std::string after;  ///< resume after this version number (decimal); empty: from version 1
  std::size_t limit = 50;
};

class contract_writes;

/// Reads of contracts, as a snapshot or a write transaction sees them.
class contract_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = contract_writes;
  /// The latest version's record of contract `id`, or nullopt.
  virtual std::optional<std::string> latest(std::string_view tenant, std::string_view id) const = 0;
  /// Version `version` (from 1) of contract `id`, or nullopt.
  virtual std::optional<std::string> version(std::string_view tenant, std::string_view id,
                                             std::int64_t version) const = 0;
  /// The latest records of every contract whose latest version lists Work `work_id`.
  virtual std::vector<std::string> for_work(std::string_view tenant, std::string_view work_id) const = 0;
  /// A page of the tenant's contracts (latest versions).
  virtual record_page list(const contract_query& q) const = 0;
  /// A page of one contract's versions.
  virtual record_page versions(const contract_versions_query& q) const = 0;
  /// Every (usage type, status) pair that some stored version of the tenant's contracts names, each
  /// once and never forgotten: a superset of what its Resources' rights can resolve to (search asks
  /// it to know which of its two lists can answer). Costs the pairs, not the contracts.
  virtual std::vector<std::pair<std::string, std::string>> usages_named(std::string_view tenant) const = 0;
};

/// Writes of contracts, inside the writer's transaction.
class contract_writes : public contract_reads {
public:
  /// Stores `record` as version `version` of contract `id` and as its latest, with its `status`
  /// and the Works it lists: the Work index gains the Works it adds and loses those the previous
  /// version listed and this one does not.
  virtual void put_version(std::string_view tenant, std::string_view id, std::int64_t version, std::string_view status,
                           const std::vector<std::string>& works, std::string_view record) = 0;
};

}  // namespace cl::storage
