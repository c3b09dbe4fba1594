#pragma once
/// Helpers shared by the Resource route plans (reads, writes, versions, content units).
/// Included by plan sources only.

#include "actors/plan_paging.hpp"
#include "actors/plan_support.hpp"
#include "domain/access.hpp"

#include <variant>

namespace cl::domain {
struct field_mask;
struct resolved_rights;
}

namespace cl::actors {

/// Layer 2 first (403 ACCESS_DENIED without `needed`), then the Resource's current record, which
/// `k` gets. A grant implies the Resource exists; `missing` answers the race with nothing.
void with_granted_resource(const plan_run& run, const std::string& id, domain::access_role needed,
                           domain::error_id missing, std::function<void(std::shared_ptr<std::string>)> k);

/// The current record of Resource `id` of the caller's tenant, to `k`: read in place when the store
/// can answer without waiting (`record_store::resource_at_once`: LMDB, PostgreSQL's hot records),
/// else asked of the reader actor (a failure of either answers through `run`).
void fetch_resource(const plan_run& run, const std::string& id, std::function<void(fetch_outcome&)> k);

/// The same, `k` also getting the change log's position read before the record (a list of its
/// parts answers it as `changes_cursor`).
void with_granted_resource_at(const plan_run& run, const std::string& id, domain::access_role needed,
                              domain::error_id missing,
                              std::function<void(std::shared_ptr<std::string>, std::uint64_t)> k);

/// Presents stored Resource records as list items: each with its `rights` (resolved now, all in
/// one ask) and `hash`, and as `use` may see it (layer 3: without content the rights do not
/// allow). `summary` items (a version list) never carry content or an update_token. With `mask`,
/// each item as a masked read shows it (`rights.odrl` included when named).
/// The edge cache's keys of an answer about Resource `id` (a read of it, its policy, its entities):
/// the tenant, the Resource, its Work and the contracts its rights rest on (`edge_keys`).
void resource_edge_keys(domain::api_reply& r, const request_context& ctx, const std::string& id,
                        const std::string& record, const domain::resolved_rights& rights);
/// The keys of `resource_edge_keys` as its `Surrogate-Key` shows them.
std::string resource_edge_key_list(const request_context& ctx, const std::string& id, const std::string& record,
                                   const domain::resolved_rights& rights);

/// `fields` of a list of Resources (`GET /resources`, a version list): each item masked as a
/// read of it; null without `fields`. Stitched members (which would cost each item a fetch of its
/// own) are for single reads: 400 INVALID_ARGUMENT naming them.
std::variant<std::shared_ptr<const domain::field_mask>, domain::api_reply> list_mask(const request_context& ctx);

item_presenter resource_items(const plan_run& run, domain::content_use use, bool summary,
                              std::shared_ptr<const domain::field_mask> mask = nullptr);

}  // namespace cl::actors
