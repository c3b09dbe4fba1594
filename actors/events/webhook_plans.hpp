#pragma once
/// Plans of the webhooks route group (issue 29, part 2), registered in app/webhooks_group.cpp. A
/// webhook belongs to the principal that created it (its owner): only the owner sees or changes
/// it, and its deliveries carry what the owner may read at delivery time. Another principal's or
/// another tenant's webhook is answered 404 WEBHOOK_NOT_FOUND, as one that does not exist.

#include "actors/coordinator.hpp"

namespace cl::actors {

/// POST /v0/content-lake/webhooks
void plan_create_webhook(const plan_run& run);
/// GET /v0/content-lake/webhooks
void plan_list_webhooks(const plan_run& run);
/// GET /v0/content-lake/webhooks/{id}
void plan_get_webhook(const plan_run& run);
/// PATCH /v0/content-lake/webhooks/{id}
void plan_update_webhook(const plan_run& run);
/// DELETE /v0/content-lake/webhooks/{id}
void plan_delete_webhook(const plan_run& run);
/// POST /v0/content-lake/webhooks/{id}/rotate-secret
void plan_rotate_webhook_secret(const plan_run& run);
/// POST /v0/content-lake/webhooks/{id}/test
void plan_test_webhook(const plan_run& run);
/// GET /v0/content-lake/webhooks/{id}/deliveries
void plan_list_webhook_deliveries(const plan_run& run);
/// POST /v0/content-lake/webhooks/{id}/replay
void plan_replay_webhook(const plan_run& run);

}  // namespace cl::actors
