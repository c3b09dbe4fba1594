#include "actors/plans.hpp"
#include "http/openapi.hpp"
#include "http/router.hpp"

namespace cl::http {

namespace {

domain::api_reply serve_openapi(const domain::api_request&) {
  domain::api_reply r;
  r.body = std::string{openapi_document()};
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  return r;
}

}  // namespace

const std::vector<route>& route_table() {
  static const std::vector<route> routes = {
    {"GET", "/v0/openapi.json", "", nullptr, &serve_openapi},
    {"POST", "/v0/content-lake/resources", "content-lake.write", &actors::plan_create_resource, nullptr},
    {"GET", "/v0/content-lake/resources", "content-lake.read", &actors::plan_list_resources, nullptr},
    {"GET", "/v0/content-lake/resources/{id}", "content-lake.read", &actors::plan_get_resource, nullptr},
    {"PUT", "/v0/content-lake/resources/{id}", "content-lake.write", &actors::plan_replace_resource, nullptr},
    {"PATCH", "/v0/content-lake/resources/{id}", "content-lake.write", &actors::plan_patch_resource, nullptr},
    {"POST", "/v0/content-lake/resources/{id}/versions", "content-lake.write", &actors::plan_create_version, nullptr},
    {"GET", "/v0/content-lake/resources/{id}/versions", "content-lake.read", &actors::plan_list_versions, nullptr},
    {"GET", "/v0/content-lake/resources/{id}/entities", "content-lake.read", &actors::plan_get_entities, nullptr},
    {"GET", "/v0/content-lake/content-units", "content-lake.read", &actors::plan_list_content_units, nullptr},
    {"GET", "/v0/content-lake/content-units/{id}", "content-lake.read", &actors::plan_get_content_unit, nullptr},
    {"GET", "/v0/content-lake/sources/{id}", "content-lake.read", &actors::plan_get_source, nullptr},
    {"GET", "/v0/content-lake/activities", "content-lake.read", &actors::plan_list_activities, nullptr},
    {"GET", "/v0/content-lake/activities/{id}", "content-lake.read", &actors::plan_get_activity, nullptr},
    {"GET", "/v0/content-lake/resources/{id}/access", "content-lake.read", &actors::plan_list_grants, nullptr},
    {"GET", "/v0/content-lake/resources/{id}/access/{principal}", "content-lake.read", &actors::plan_get_grant, nullptr},
    {"PUT", "/v0/content-lake/resources/{id}/access/{principal}", "content-lake.write", &actors::plan_put_grant, nullptr},
    {"DELETE", "/v0/content-lake/resources/{id}/access/{principal}", "content-lake.write", &actors::plan_delete_grant,
     nullptr},
    {"POST", "/v0/content-lake/works", "content-lake.write", &actors::plan_create_work, nullptr},
    {"GET", "/v0/content-lake/works", "content-lake.read", &actors::plan_list_works, nullptr},
    {"GET", "/v0/content-lake/works/{id}", "content-lake.read", &actors::plan_get_work, nullptr},
    {"POST", "/v0/content-lake/works/{id}/resources", "content-lake.write", &actors::plan_promote_resource, nullptr},
    {"POST", "/v0/contracts", "contracts.write", &actors::plan_create_contract, nullptr},
    {"GET", "/v0/contracts", "contracts.read", &actors::plan_list_contracts, nullptr},
    {"GET", "/v0/contracts/{id}", "contracts.read", &actors::plan_get_contract, nullptr},
    {"POST", "/v0/contracts/{id}/versions", "contracts.write", &actors::plan_create_contract_version, nullptr},
    {"GET", "/v0/contracts/{id}/versions", "contracts.read", &actors::plan_list_contract_versions, nullptr},
  };
  return routes;
}

}  // namespace cl::http
