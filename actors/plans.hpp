#pragma once
/// Plans of the existing route groups' public routes, one per operation; each group registers
/// them with its routes in app/<group>_group.cpp. A new group declares its plans in a header of
/// its own (docs/architecture.md, the recipe).

#include "actors/coordinator.hpp"

namespace cl::actors {

/// POST /v0/content-lake/resources
void plan_create_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/resources
void plan_list_resources(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/resources/{id}
void plan_get_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// PUT /v0/content-lake/resources/{id}
void plan_replace_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// PATCH /v0/content-lake/resources/{id} (JSON Merge Patch)
void plan_patch_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// POST /v0/content-lake/resources/{id}/versions (snapshot)
void plan_create_version(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/resources/{id}/versions
void plan_list_versions(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/resources/{id}/entities
/// GET /resources/{id}/rights/odrl: the caller's resolved rights as an ODRL 2.2 Agreement (docs/rights.md).
void plan_get_resource_odrl(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);
void plan_get_entities(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// POST /v0/content-lake/works/{id}/resources (promotion of a staged Resource)
void plan_promote_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/content-units
void plan_list_content_units(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/content-units/{id}
void plan_get_content_unit(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// POST /v0/content-lake/works
void plan_create_work(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/works/{id}
void plan_get_work(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/sources/{id}
void plan_get_source(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/activities/{id}
void plan_get_activity(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/activities
void plan_list_activities(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/works
void plan_list_works(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

// Access grants (layer 2): actors/access_plans.cpp

/// GET /v0/content-lake/resources/{id}/access
void plan_list_grants(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/content-lake/resources/{id}/access/{principal}
void plan_get_grant(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// PUT /v0/content-lake/resources/{id}/access/{principal}
void plan_put_grant(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// DELETE /v0/content-lake/resources/{id}/access/{principal}
void plan_delete_grant(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

// The contracts route group (preview): actors/contract_plans.cpp

/// POST /v0/contracts
void plan_create_contract(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/contracts
void plan_list_contracts(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// GET /v0/contracts/{id} (latest, or ?version=N)
void plan_get_contract(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

/// POST /v0/contracts/{id}/versions (a new version)
void plan_create_contract_version(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx,
                                  reply_fn done);

/// GET /v0/contracts/{id}/versions
void plan_list_contract_versions(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx,
                                 reply_fn done);

}  // namespace cl::actors
