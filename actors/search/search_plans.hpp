#pragma once
/// Plans of the search route group (spec 4.5.3), registered in app/search_group.cpp. The search
/// session actor (actors/search/search_session.hpp) ranks candidates the caller may read (layer 2 inside
/// the query); the plan resolves their rights now, with the same resolver and cache as
/// `GET resource`, and applies layer 3 to each hit: a hit whose rights refuse the request's use
/// comes without its snippet, and only when its metadata (title) alone matches the query.

#include "actors/coordinator.hpp"

namespace cl::actors {

/// POST /v0/content-lake/search (a new search, or the next page of `search_id`)
void plan_search(const plan_run& run);

}  // namespace cl::actors
