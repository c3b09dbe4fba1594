// Works: POST /works, GET /works/{id}, GET /works.

#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_paging.hpp"
#include "actors/plan_write.hpp"
#include "actors/plan_support.hpp"
#include "actors/plans.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/page_token.hpp"
#include "domain/records.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

namespace cl::actors {

namespace json = boost::json;

void plan_create_work(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto& body = std::get<json::object>(parsed);
  if (auto refusal = unknown_members(body, {"title", "description"})) return run.answer(std::move(*refusal));
  auto* title = body.if_contains("title");
  if (!title || !title->is_string() || title->as_string().empty() || title->as_string().size() > 1000)
    return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument, "A Work needs a title.",
                                                 {{"/title", "a string of 1 to 1000 characters"}}));
  auto* description = body.if_contains("description");
  if (description && (!description->is_string() || description->as_string().size() > 10000))
    return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument, "The description is invalid.",
                                                 {{"/description", "a string of at most 10000 characters"}}));
  auto id = domain::random_id("wk_");
  auto at = domain::iso8601_now();
  std::string record = "{\"id\":" + domain::json_string(id) + ",\"title\":" + domain::json_string(title->as_string());
  if (description) record += ",\"description\":" + domain::json_string(description->as_string());
  record += ",\"created\":" + domain::json_string(at) + ",\"updated\":" + domain::json_string(at) + "}";
  auto who = run->who;
  auto outcome = std::make_shared<write_outcome>();
  storage::mutation create = [who, id, at, record, outcome](storage::write_txn& tx) {
    tx.catalog().put(storage::catalog_kind::work, who.tenant_id, id, record);
    record_activity(tx, who, "CREATION", "work", id, {}, {}, at);
    log_change(tx, who.tenant_id, storage::change_op::created, storage::change_kind::work, id);
    outcome->reply = json_reply(201, record);
    outcome->reply->headers.emplace_back("Location", "/v0/content-lake/works/" + id);
    outcome->reply->headers.emplace_back("Cache-Control", "no-store");
    return true;
  };
  write_then(run, std::move(create), outcome, "The Work");
}

void plan_get_work(const plan_run& run) {
  answer_catalog(run, storage::catalog_kind::work, run->param("id"), domain::error_id::work_not_found, "Work");
}

void plan_get_source(const plan_run& run) {
  answer_catalog(run, storage::catalog_kind::source, run->param("id"), domain::error_id::source_not_found, "Source");
}

void plan_get_activity(const plan_run& run) {
  const auto& id = run->param("id");
  ask(
    run, run->actors->get<reader_actor>(), "record reader",
    [run, id](fetch_outcome& found) {
      if (!found.found) return run.answer(not_found(domain::error_id::activity_not_found, "Activity", id));
      auto record = std::make_shared<std::string>(std::move(found.json));
      auto answer = [run, record] {
        auto r = json_reply(200, std::move(*record));
        private_for_a_second(r);
        run.answer(std::move(r));
      };
      auto resource = storage::activity_about(*record);
      if (resource.empty()) return answer();
      // An Activity about a Resource is seen by those who may read the Resource; to anyone else
      // it does not exist, as in the list (docs/api.md "403 or 404"): the same answer, word for word.
      with_role(run, resource, [run, id, answer](domain::access_role role) {
        if (role == domain::access_role::none)
          return run.answer(not_found(domain::error_id::activity_not_found, "Activity", id));
        answer();
      });
    },
    fetch_atom_v, storage::activity_ref{run->who.tenant_id, id});
}

void plan_list_works(const plan_run& run) {
  storage::catalog_query q;
  q.kind = storage::catalog_kind::work;
  q.tenant = run->who.tenant_id;
  answer_query(run, "works", {}, query_pages(run, run->actors->get<reader_actor>(), "record reader", q));
}

void plan_list_activities(const plan_run& run) {
  auto type = query_param(run->request.query, "type");
  auto resource = query_param(run->request.query, "resource_id");
  const auto& types = domain::activity_types();
  if (!type.empty() && std::find(types.begin(), types.end(), type) == types.end())
    return run.answer(
      domain::api_reply::failure(domain::error_id::invalid_argument, "Unknown Activity type.",
                                 {{"type", "one of CREATION, UPDATE, VERSION, PROMOTION, ADAPTATION"}}));
  std::vector<std::pair<std::string, std::string>> filters;
  if (!type.empty()) filters.emplace_back("type", type);
  if (!resource.empty()) filters.emplace_back("resource_id", resource);
  // Layer 2: an Activity about a Resource is listed only to those who may read the Resource (the
  // store checks the caller's principals' grants per Activity).
  with_principals(run, [run, filters, type, resource](std::vector<std::string> principals) {
    storage::activity_query q;
    q.tenant = run->who.tenant_id;
    q.readable_by = std::move(principals);
    q.type = type;
    q.resource_id = resource;
    answer_query(run, "activities", filters, query_pages(run, run->actors->get<reader_actor>(), "record reader", q));
  });
}

}  // namespace cl::actors
