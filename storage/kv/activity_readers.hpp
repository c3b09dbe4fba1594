#pragma once
/// The key-value backends' index of Activities by who may read them (`activities_by_reader`:
/// tenant\0principal\0activity -> ""), so a list of the Activities a caller reads costs the page it
/// answers, not the Activities of others before it. An Activity about a Resource is listed under
/// every principal holding a grant on the Resource; one about no Resource (a Work, a contract)
/// under `everyone`. The Activity store writes its part when an Activity is stored; the grant store
/// calls `index_resource_activities` when a principal gains or loses its grant.

#include "storage/kv/kv.hpp"

#include <string_view>

namespace cl::storage::kv {

/// The principal under which Activities every reader of the tenant may see are listed (no
/// principal id has this form: they start `u_`, `a_` or `g_`).
inline constexpr std::string_view everyone = "*";

/// `principal` gained (`add`) or lost its grant on `resource`: the Resource's Activities enter or
/// leave its part of the index (cost: the Resource's Activities).
void index_resource_activities(const reader& r, writer& w, std::string_view tenant, std::string_view resource,
                               std::string_view principal, bool add);

}  // namespace cl::storage::kv
