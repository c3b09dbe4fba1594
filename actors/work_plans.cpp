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
  if (!ctx->actors->writer) return done(backend_unavailable("writer"));
  self->request(ctx->actors->writer, ctx->timeout, write_atom_v, std::move(create))
    .then(
      [done, id, record](bool kept) {
        if (!kept) return done(domain::api_reply::failure(domain::error_id::internal, "The Work could not be stored."));
        auto r = json_reply(201, record);
        r.headers.emplace_back("Location", "/v0/content-lake/works/" + id);
        r.headers.emplace_back("Cache-Control", "no-store");
        done(std::move(r));
      },
      [done](caf::error&) { done(backend_unavailable("writer")); });
}

void plan_get_work(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  const auto& id = ctx->param("id");
  self->request(ctx->actors->reader, ctx->timeout, caf::get_atom_v, storage::table::works,
                storage::tenant_key(ctx->who.tenant_id, id))
    .then(
      [self, ctx, done, id](fetch_outcome& found) {
        if (!found.found) return answer_miss(self, ctx, id, domain::error_id::work_not_found, "Work", done);
        auto r = json_reply(200, std::move(found.json));
        r.headers.emplace_back("Cache-Control", "private, max-age=1");
        done(std::move(r));
      },
      [done](caf::error&) { done(backend_unavailable("record reader")); });
}

void plan_list_works(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto size = domain::page_size_from(query_param(ctx->request.query, "page_size"));
  if (auto* e = std::get_if<domain::api_error>(&size)) return done(domain::api_reply::from(std::move(*e)));
  auto page_size = std::get<std::size_t>(size);
  auto prefix = storage::tenant_key(ctx->who.tenant_id, "");
  const std::string filters = domain::canonical_query({});
  std::string after;
  auto token = query_param(ctx->request.query, "page_token");
  if (!token.empty()) {
    auto opened = ctx->page_tokens->open(token, ctx->who.tenant_id, "works?" + filters);
    if (auto* e = std::get_if<domain::api_error>(&opened)) return done(domain::api_reply::from(std::move(*e)));
    after = std::get<std::string>(opened);
  }
  self->request(ctx->actors->reader, ctx->timeout, scan_atom_v, storage::table::works, prefix, after, page_size + 1)
    .then(
      [ctx, done, page_size, filters](scan_result& page) {
        bool more = page.entries.size() > page_size;
        if (more) page.entries.resize(page_size);
        std::string body = "{\"works\":[";
        for (std::size_t i = 0; i < page.entries.size(); ++i) body += (i ? "," : "") + page.entries[i].second;
        body += "]";
        if (more)
          body += ",\"next_page_token\":"
                  + domain::json_string(ctx->page_tokens->issue(
                    {ctx->who.tenant_id, "works?" + filters, page.entries.back().first}));
        body += "}";
        auto r = json_reply(200, std::move(body));
        r.headers.emplace_back("Cache-Control", "private, max-age=1");
        done(std::move(r));
      },
      [done](caf::error&) { done(backend_unavailable("record reader")); });
}

}  // namespace cl::actors
