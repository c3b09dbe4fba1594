// Route group: Resources (spec 4.1-4.3), their versions, entities and content units. Its plans
// (actors/resource_*_plans.cpp, actors/content_unit_plans.cpp) run on the core's actors.

#include "actors/plans.hpp"
#include "app/groups.hpp"

namespace cl::app {

void register_resources(registry& r) {
  r.add_routes({
    http::write_only({"POST", "/v0/content-lake/resources", "content-lake.write", &actors::plan_create_resource, nullptr}),
    {"GET", "/v0/content-lake/resources", "content-lake.read", &actors::plan_list_resources, nullptr},
    {"GET", "/v0/content-lake/resources/{id}", "content-lake.read", &actors::plan_get_resource, nullptr, std::chrono::milliseconds{0}, /*reads_accept=*/true},
    http::write_only({"PUT", "/v0/content-lake/resources/{id}", "content-lake.write", &actors::plan_replace_resource, nullptr}),
    http::write_only({"PATCH", "/v0/content-lake/resources/{id}", "content-lake.write", &actors::plan_patch_resource, nullptr}),
    http::write_only({"POST", "/v0/content-lake/resources/{id}/versions", "content-lake.write", &actors::plan_create_version, nullptr}),
    {"GET", "/v0/content-lake/resources/{id}/versions", "content-lake.read", &actors::plan_list_versions, nullptr},
    {"GET", "/v0/content-lake/resources/{id}/entities", "content-lake.read", &actors::plan_get_entities, nullptr},
    {"GET", "/v0/content-lake/content-units", "content-lake.read", &actors::plan_list_content_units, nullptr},
    {"GET", "/v0/content-lake/content-units/{id}", "content-lake.read", &actors::plan_get_content_unit, nullptr},
  });
}

}  // namespace cl::app
