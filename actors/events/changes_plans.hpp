#pragma once
/// Plans of the changes route group (issue 29), registered in app/changes_group.cpp: the change
/// feed, read by the changes feed actor (actors/events/changes_feed.hpp).

#include "actors/coordinator.hpp"

namespace cl::actors {

/// GET /v0/content-lake/changes (`since`, `types`, `page_size`, `wait`)
void plan_changes(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done);

}  // namespace cl::actors
