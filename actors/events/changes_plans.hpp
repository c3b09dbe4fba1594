#pragma once
/// Plans of the changes route group (issue 29), registered in app/changes_group.cpp: the change
/// feed, read by the changes feed actor (actors/events/changes_feed.hpp).

#include "actors/coordinator.hpp"

namespace cl::actors {

/// GET /v0/content-lake/changes (`since`, `types`, `page_size`, `wait`)
void plan_changes(const plan_run& run);

}  // namespace cl::actors
