#pragma once
/// Plans of the existing route groups' public routes, one per operation; each group registers
/// them with its routes in app/<group>_group.cpp. A new group declares its plans in a header of
/// its own (docs/architecture.md, the recipe).

#include "actors/coordinator.hpp"

namespace cl::actors {

/// POST /v0/content-lake/resources
void plan_create_resource(const plan_run& run);

/// GET /v0/content-lake/resources
void plan_list_resources(const plan_run& run);

/// GET /v0/content-lake/resources/{id}
void plan_get_resource(const plan_run& run);

/// PUT /v0/content-lake/resources/{id}
void plan_replace_resource(const plan_run& run);

/// PATCH /v0/content-lake/resources/{id} (JSON Merge Patch)
void plan_patch_resource(const plan_run& run);

/// POST /v0/content-lake/resources/{id}/versions (snapshot)
void plan_create_version(const plan_run& run);

/// GET /v0/content-lake/resources/{id}/versions
void plan_list_versions(const plan_run& run);

/// GET /v0/content-lake/resources/{id}/entities
/// GET /resources/{id}/rights/odrl: the caller's resolved rights as an ODRL 2.2 Agreement (docs/rights.md).
void plan_get_resource_odrl(const plan_run& run);
void plan_get_entities(const plan_run& run);

/// POST /v0/content-lake/works/{id}/resources (promotion of a staged Resource)
void plan_promote_resource(const plan_run& run);

/// GET /v0/content-lake/content-units
void plan_list_content_units(const plan_run& run);

/// GET /v0/content-lake/content-units/{id}
void plan_get_content_unit(const plan_run& run);

/// POST /v0/content-lake/works
void plan_create_work(const plan_run& run);

/// GET /v0/content-lake/works/{id}
void plan_get_work(const plan_run& run);

/// GET /v0/content-lake/sources/{id}
void plan_get_source(const plan_run& run);

/// GET /v0/content-lake/activities/{id}
void plan_get_activity(const plan_run& run);

/// GET /v0/content-lake/activities
void plan_list_activities(const plan_run& run);

/// GET /v0/content-lake/works
void plan_list_works(const plan_run& run);

// Access grants (layer 2): actors/access_plans.cpp

/// GET /v0/content-lake/resources/{id}/access
void plan_list_grants(const plan_run& run);

/// GET /v0/content-lake/resources/{id}/access/{principal}
void plan_get_grant(const plan_run& run);

/// PUT /v0/content-lake/resources/{id}/access/{principal}
void plan_put_grant(const plan_run& run);

/// DELETE /v0/content-lake/resources/{id}/access/{principal}
void plan_delete_grant(const plan_run& run);

// The contracts route group (preview): actors/contract_plans.cpp

/// POST /v0/contracts
void plan_create_contract(const plan_run& run);

/// GET /v0/contracts
void plan_list_contracts(const plan_run& run);

/// GET /v0/contracts/{id} (latest, or ?version=N)
void plan_get_contract(const plan_run& run);

/// POST /v0/contracts/{id}/versions (a new version)
void plan_create_contract_version(const plan_run& run);

/// GET /v0/contracts/{id}/versions
void plan_list_contract_versions(const plan_run& run);

}  // namespace cl::actors
