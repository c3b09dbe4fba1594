// Works: POST /works, GET /works/{id}, GET /works.

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
  storage::mutation create = [who, id, at, record](storage::write_txn& tx) {
    tx.put(storage::table::works, storage::tenant_key(who.tenant_id, id), record);
    tx.put(storage::table::id_index, id, who.tenant_id);
    record_activity(tx, who, "CREATION", "work", id, {}, {}, at);
    log_change(tx, who.tenant_id, "create", "work", id);
    return true;
  };
  write_then(
    self, ctx, std::move(create), [] { return std::optional<domain::api_error>{}; }, "The Work",
    [done, id, record] {
      auto r = json_reply(201, record);
      r.headers.emplace_back("Location", "/v0/content-lake/works/" + id);
      r.headers.emplace_back("Cache-Control", "no-store");
      done(std::move(r));
    },
    done);
}

void plan_get_work(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  answer_record(self, ctx, storage::table::works, ctx->param("id"), domain::error_id::work_not_found, "Work", done);
}

void plan_get_source(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  answer_record(self, ctx, storage::table::sources, ctx->param("id"), domain::error_id::source_not_found, "Source", done);
}

void plan_get_activity(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  answer_record(self, ctx, storage::table::activities, ctx->param("id"), domain::error_id::activity_not_found, "Activity",
                done);
}

void plan_list_works(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  answer_list(self, ctx, storage::table::works, "works", {}, nullptr, done);
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
  record_filter keep;
  if (!filters.empty()) {
    // Activity records are our own canonical JSON: exact member text identifies a match.
    auto type_text = type.empty() ? std::string{} : "\"type\":" + domain::json_string(type) + ",";
    auto target_text =
      resource.empty() ? std::string{} : "\"target\":{\"kind\":\"resource\",\"id\":" + domain::json_string(resource) + "}";
    keep = [type_text, target_text](std::string_view record) {
      return (type_text.empty() || record.find(type_text) != std::string_view::npos)
             && (target_text.empty() || record.find(target_text) != std::string_view::npos);
    };
  }
  answer_list(self, ctx, storage::table::activities, "activities", filters, std::move(keep), done);
}

}  // namespace cl::actors
