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

void plan_create_work(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto parsed = json_body(ctx->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return done(std::move(*refusal));
  auto& body = std::get<json::object>(parsed);
  if (auto refusal = unknown_members(body, {"title", "description"})) return done(std::move(*refusal));
  auto* title = body.if_contains("title");
  if (!title || !title->is_string() || title->as_string().empty() || title->as_string().size() > 1000)
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "A Work needs a title.",
                                           {{"/title", "a string of 1 to 1000 characters"}}));
  auto* description = body.if_contains("description");
  if (description && (!description->is_string() || description->as_string().size() > 10000))
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "The description is invalid.",
                                           {{"/description", "a string of at most 10000 characters"}}));
  auto id = domain::random_id("wk_");
  auto at = domain::iso8601_now();
  std::string record = "{\"id\":" + domain::json_string(id) + ",\"title\":" + domain::json_string(title->as_string());
  if (description) record += ",\"description\":" + domain::json_string(description->as_string());
  record += ",\"created\":" + domain::json_string(at) + ",\"updated\":" + domain::json_string(at) + "}";
  auto who = ctx->who;
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
  write_then(self, ctx, std::move(create), outcome, "The Work", done);
}

void plan_get_work(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  answer_catalog(self, ctx, storage::catalog_kind::work, ctx->param("id"), domain::error_id::work_not_found, "Work", done);
}

void plan_get_source(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  answer_catalog(self, ctx, storage::catalog_kind::source, ctx->param("id"), domain::error_id::source_not_found, "Source",
                 done);
}

void plan_get_activity(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  const auto& id = ctx->param("id");
  ask(
    self, *ctx, done, ctx->actors->get<reader_actor>(), "record reader",
    [self, ctx, done, id](fetch_outcome& found) {
      if (!found.found) return done(not_found(domain::error_id::activity_not_found, "Activity", id));
      auto record = std::make_shared<std::string>(std::move(found.json));
      auto answer = [done, record] {
        auto r = json_reply(200, std::move(*record));
        private_for_a_second(r);
        done(std::move(r));
      };
      auto resource = storage::activity_about(*record);
      if (resource.empty()) return answer();
      // An Activity about a Resource is seen by those who may read the Resource; to anyone else
      // it does not exist, as in the list (docs/api.md "403 or 404"): the same answer, word for word.
      with_role(
        self, ctx, resource,
        [done, id, answer](domain::access_role role) {
          if (role == domain::access_role::none) return done(not_found(domain::error_id::activity_not_found, "Activity", id));
          answer();
        },
        done);
    },
    fetch_atom_v, storage::activity_ref{ctx->who.tenant_id, id});
}

void plan_list_works(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  storage::catalog_query q;
  q.kind = storage::catalog_kind::work;
  q.tenant = ctx->who.tenant_id;
  answer_query(ctx, "works", {}, query_pages(self, ctx, done, ctx->actors->get<reader_actor>(), "record reader", q), done);
}

void plan_list_activities(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto type = query_param(ctx->request.query, "type");
  auto resource = query_param(ctx->request.query, "resource_id");
  const auto& types = domain::activity_types();
  if (!type.empty() && std::find(types.begin(), types.end(), type) == types.end())
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "Unknown Activity type.",
                                           {{"type", "one of CREATION, UPDATE, VERSION, PROMOTION, ADAPTATION"}}));
  std::vector<std::pair<std::string, std::string>> filters;
  if (!type.empty()) filters.emplace_back("type", type);
  if (!resource.empty()) filters.emplace_back("resource_id", resource);
  // Layer 2: an Activity about a Resource is listed only to those who may read the Resource (the
  // store checks the caller's principals' grants per Activity).
  with_principals(
    self, ctx,
    [self, ctx, done, filters, type, resource](std::vector<std::string> principals) {
      storage::activity_query q;
      q.tenant = ctx->who.tenant_id;
      q.readable_by = std::move(principals);
      q.type = type;
      q.resource_id = resource;
      answer_query(ctx, "activities", filters, query_pages(self, ctx, done, ctx->actors->get<reader_actor>(), "record reader", q), done);
    },
    done);
}

}  // namespace cl::actors
