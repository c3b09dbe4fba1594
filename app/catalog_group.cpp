// Route group: Works (with promotion of staged Resources), Sources and Activities (spec 3, 4.5).
// Reads go through the core's readers, writes through its writer: no actors of its own.

#include "actors/plans.hpp"
#include "app/groups.hpp"

namespace cl::app {

void register_catalog(registry& r) {
  r.add_routes({
    {"GET", "/v0/content-lake/sources/{id}", "content-lake.read", &actors::plan_get_source, nullptr},
    {"GET", "/v0/content-lake/activities", "content-lake.read", &actors::plan_list_activities, nullptr},
    {"GET", "/v0/content-lake/activities/{id}", "content-lake.read", &actors::plan_get_activity, nullptr},
    http::write_only({"POST", "/v0/content-lake/works", "content-lake.write", &actors::plan_create_work, nullptr}),
    {"GET", "/v0/content-lake/works", "content-lake.read", &actors::plan_list_works, nullptr},
    {"GET", "/v0/content-lake/works/{id}", "content-lake.read", &actors::plan_get_work, nullptr},
    http::write_only({"POST", "/v0/content-lake/works/{id}/resources", "content-lake.write", &actors::plan_promote_resource, nullptr}),
  });
}

}  // namespace cl::app
