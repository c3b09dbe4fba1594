// Route group: Resources (spec 4.1-4.3), their versions, entities and content units. Its plans
// (actors/resource_*_plans.cpp, actors/content_unit_plans.cpp) run on the core's actors.

#include "actors/plans.hpp"
#include "app/groups.hpp"
#include "domain/odrl.hpp"

namespace cl::app {

namespace {

constexpr const char* tdm_policy_path = "/v0/rights/tdm-policy";

/// TDMRep (JSON form): every content path reserved unless a read's own headers say otherwise.
domain::api_reply serve_tdmrep(const domain::api_request&, const http::local_context&) {
  domain::api_reply r;
  r.body = domain::tdmrep_json(tdm_policy_path);
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  return r;
}

/// The policy tdmrep.json points to: how to obtain a licence (an ODRL Offer).
domain::api_reply serve_tdm_policy(const domain::api_request&, const http::local_context&) {
  domain::api_reply r;
  r.content_type = "application/ld+json";
  r.body = domain::tdm_offer_json("");
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  return r;
}

}  // namespace

void register_resources(registry& r) {
  r.add_routes({
    http::write_only({"POST", "/v0/content-lake/resources", "content-lake.write", &actors::plan_create_resource, nullptr}),
    {"GET", "/v0/content-lake/resources", "content-lake.read", &actors::plan_list_resources, nullptr},
    http::run_in_place({"GET", "/v0/content-lake/resources/{id}", "content-lake.read", &actors::plan_get_resource, nullptr, std::chrono::milliseconds{0}, /*reads_accept=*/true}),
    http::write_only({"PUT", "/v0/content-lake/resources/{id}", "content-lake.write", &actors::plan_replace_resource, nullptr}),
    http::write_only({"PATCH", "/v0/content-lake/resources/{id}", "content-lake.write", &actors::plan_patch_resource, nullptr}),
    http::write_only({"POST", "/v0/content-lake/resources/{id}/versions", "content-lake.write", &actors::plan_create_version, nullptr}),
    {"GET", "/v0/content-lake/resources/{id}/versions", "content-lake.read", &actors::plan_list_versions, nullptr},
    http::run_in_place({"GET", "/v0/content-lake/resources/{id}/rights/odrl", "content-lake.read", &actors::plan_get_resource_odrl, nullptr}),
    http::run_in_place({"GET", "/v0/content-lake/resources/{id}/entities", "content-lake.read", &actors::plan_get_entities, nullptr}),
    {"GET", "/v0/content-lake/content-units", "content-lake.read", &actors::plan_list_content_units, nullptr},
    {"GET", "/v0/content-lake/content-units/{id}", "content-lake.read", &actors::plan_get_content_unit, nullptr},
    {"GET", "/.well-known/tdmrep.json", "", nullptr, &serve_tdmrep},
    {"GET", tdm_policy_path, "", nullptr, &serve_tdm_policy},
  });
}

}  // namespace cl::app
