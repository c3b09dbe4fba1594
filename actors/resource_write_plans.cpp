// Resource writes: POST /resources, PUT and PATCH /resources/{id}, promotion (POST /works/{id}/resources).

#include "actors/access.hpp"
#include "actors/blobs/blob_plans.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_write.hpp"
#include "actors/plan_support.hpp"
#include "actors/resource_stitch.hpp"
#include "actors/plans.hpp"
#include "actors/resource_support.hpp"
#include "domain/field_mask.hpp"
#include "domain/base64url.hpp"
#include "domain/content_format.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/layer3.hpp"
#include "domain/negotiation.hpp"
#include "domain/page_token.hpp"
#include "domain/records.hpp"
#include "domain/resource.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <map>

namespace cl::actors {

namespace json = boost::json;

namespace {

/// The blob references of the content a write body sets, if it sets any: the whole content of a
/// create or PUT, the blocks a PATCH's content replaces (JSON Merge Patch replaces arrays whole).
std::vector<domain::blob_reference> blob_references_in_body(const json::object& body) {
  auto* content = body.if_contains("content");
  return content ? domain::blob_references(*content, "/content") : std::vector<domain::blob_reference>{};
}

void create_resource(const plan_run& run, const std::shared_ptr<const domain::resource_draft>& d,
                     const resource_write_context& w);

}  // namespace

void plan_create_resource(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto draft = domain::parse_resource_create(std::get<json::object>(parsed));
  if (auto* e = std::get_if<domain::api_error>(&draft)) return run.answer(domain::api_reply::from(std::move(*e)));
  auto d = std::make_shared<domain::resource_draft>(std::move(std::get<domain::resource_draft>(draft)));
  auto w = begin_resource_write(run);
  if (!w) return;
  with_readable_blobs(run, blob_references_in_body(std::get<json::object>(parsed)),
                      [run, d, w = *w] { create_resource(run, d, w); });
}

namespace {

void create_resource(const plan_run& run, const std::shared_ptr<const domain::resource_draft>& d,
                     const resource_write_context& w) {
  domain::resource_identity ids;
  ids.tenant = run->who.tenant_id;
  ids.id = domain::random_id("res_");
  ids.version = domain::random_id("ver_");
  ids.created = ids.updated = domain::iso8601_now();
  storage::mutation create = [d, ids, who = w.who, outcome = w.outcome, policy = w.policy, use = w.use](storage::write_txn& tx) mutable {
    auto refuse = [&](domain::error_id id, std::string field, std::string why) {
      outcome->refusal = domain::api_error{id, "The Resource cannot be created: " + why + ".", {{field, why}}};
      return false;
    };
    if (d->work_id && !tx.catalog().get(storage::catalog_kind::work, ids.tenant, *d->work_id))
      return refuse(domain::error_id::work_not_found, "/work_id", "no such Work in this tenant");
    for (std::size_t i = 0; i < d->agents.size(); ++i)
      if (!tx.catalog().get(storage::catalog_kind::agent, ids.tenant, d->agents[i]))
        return refuse(domain::error_id::invalid_argument, "/agents/" + std::to_string(i), "no such agent");
    if (d->source_id) {
      if (!tx.catalog().get(storage::catalog_kind::source, ids.tenant, *d->source_id))
        return refuse(domain::error_id::invalid_argument, "/source_id", "no such Source in this tenant");
      ids.source_id = d->source_id;
    } else if (d->source) {
      ids.source_id = domain::random_id("src_");
      tx.catalog().put(storage::catalog_kind::source, ids.tenant, *ids.source_id,
             "{\"id\":" + domain::json_string(*ids.source_id) + ",\"name\":" + domain::json_string(d->source->name)
               + ",\"origin_type\":" + domain::json_string(d->source->origin_type)
               + ",\"system\":" + domain::json_string(d->source->system) + "}");
    }
    auto record = domain::resource_record_json(*d, ids, domain::random_id("upd_"));
    tx.resources().put(ids.tenant, ids.id, {d->work_id.value_or(""), d->type, d->language, ids.version, domain::referenced_blobs_in(d->content_json)}, record);
    tx.resources().put_version(ids.tenant, ids.id, ids.version, record);
    // The creator is the first owner (layer 2).
    domain::access_grant owner{ids.id, who.subject, domain::access_role::owner, who.subject, ids.created};
    tx.grants().put(ids.tenant, owner);
    record_activity(tx, who, d->activity_type, "resource", ids.id, d->agents, d->tooling, ids.created);
    std::string hash;
    outcome->reply = resource_answer(tx, *policy, ids.tenant, 201, record, use, &hash);
    log_change(tx, ids.tenant, storage::change_op::created, storage::change_kind::resource, ids.id, {ids.version, hash, {}});
    outcome->reply->headers.emplace_back("Location", "/v0/content-lake/resources/" + ids.id);
    return true;
  };
  write_then(run, std::move(create), w.outcome, "The Resource");
}

/// PUT and PATCH: check the update_token and write the new state in one mutation, so no
/// concurrent write can slip between the check and the write.
void update_resource(const plan_run& run, bool merge) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto body = std::make_shared<json::object>(std::move(std::get<json::object>(parsed)));
  std::shared_ptr<domain::resource_change> replacement;
  if (!merge) {
    auto change = domain::parse_resource_replace(*body);
    if (auto* e = std::get_if<domain::api_error>(&change)) return run.answer(domain::api_reply::from(std::move(*e)));
    replacement = std::make_shared<domain::resource_change>(std::move(std::get<domain::resource_change>(change)));
  } else if (!body->contains("update_token")) {
    return run.answer(
      domain::api_reply::failure(domain::error_id::invalid_argument, "The update_token is required.",
                                 {{"/update_token", "is required: pass the update_token of your last read"}}));
  }
  auto id = run->param("id");
  auto w = begin_resource_write(run);
  if (!w) return;
  storage::mutation update = [who = w->who, id, body, replacement, outcome = w->outcome, policy = w->policy, use = w->use, merge](storage::write_txn& tx) {
    auto refuse = [&](domain::api_error e) {
      outcome->refusal = std::move(e);
      return false;
    };
    auto current = tx.resources().get(who.tenant_id, id);
    if (!current) return refuse({domain::error_id::resource_not_found, "No such Resource exists in this tenant.", {}});
    auto cur = json::parse(*current).as_object();
    domain::resource_change change;
    if (replacement) {
      change = *replacement;
    } else {
      auto patched = domain::parse_resource_patch(*body, cur);
      if (auto* e = std::get_if<domain::api_error>(&patched)) return refuse(std::move(*e));
      change = std::move(std::get<domain::resource_change>(patched));
    }
    if (change.update_token != cur.at("update_token").as_string())
      return refuse({domain::error_id::token_mismatch, "The update_token is stale; read the Resource again.",
                     {{"/update_token", "does not match the current update_token"}}});
    for (std::size_t i = 0; i < change.draft.agents.size(); ++i)
      if (!tx.catalog().get(storage::catalog_kind::agent, who.tenant_id, change.draft.agents[i]))
        return refuse({domain::error_id::invalid_argument, "A named agent does not exist.",
                       {{"/agents/" + std::to_string(i), "no such agent"}}});
    domain::resource_identity ids;
    ids.tenant = who.tenant_id;
    ids.id = id;
    bool content_changed = domain::sha256_tag(change.draft.content_json) != cur.at("hash_content").as_string();
    ids.version = content_changed ? domain::random_id("ver_") : std::string{cur.at("version").as_string()};
    ids.created = std::string{cur.at("created").as_string()};
    ids.updated = domain::iso8601_now();
    if (auto* src = cur.if_contains("source_id")) ids.source_id = std::string{src->as_string()};
    if (auto* work = cur.if_contains("work_id")) change.draft.work_id = std::string{work->as_string()};
    auto record = domain::resource_record_json(change.draft, ids, domain::random_id("upd_"));
    const auto& draft = change.draft;
    tx.resources().put(who.tenant_id, id, {draft.work_id.value_or(""), draft.type, draft.language, ids.version,
                                              domain::referenced_blobs_in(draft.content_json)}, record);
    std::string hash;
    outcome->reply = resource_answer(tx, *policy, who.tenant_id, 200, record, use, &hash);
    record_activity(tx, who, "UPDATE", "resource", id, change.draft.agents, change.draft.tooling, ids.updated);
    log_change(tx, who.tenant_id, merge ? storage::change_op::patched : storage::change_op::replaced,
               storage::change_kind::resource, id, {ids.version, hash, {}});
    return true;
  };
  // Layer 2 on the Resource first (permission before anything else), then the blobs it would show.
  with_access(run, id, domain::access_role::writer,
              [run, refs = blob_references_in_body(*body), update = std::move(update),
               outcome = w->outcome](domain::access_role) {
                with_readable_blobs(run, refs,
                                    [run, update, outcome] { write_then(run, update, outcome, "The change"); });
              });
}

}  // namespace

void plan_replace_resource(const plan_run& run) { update_resource(run, false); }

void plan_patch_resource(const plan_run& run) { update_resource(run, true); }

void plan_promote_resource(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto& body = std::get<json::object>(parsed);
  if (auto refusal = unknown_members(body, {"resource_id"})) return run.answer(std::move(*refusal));
  auto* rid = body.if_contains("resource_id");
  if (!rid || !rid->is_string() || std::string_view{rid->as_string()}.substr(0, 4) != "res_")
    return run.answer(domain::api_reply::failure(
      domain::error_id::invalid_argument, "Name the staged Resource to promote.", {{"/resource_id", "a res_ id"}}));
  std::string resource_id{rid->as_string()};
  std::string work_id = run->param("id");
  auto w = begin_resource_write(run);
  if (!w) return;
  storage::mutation promote = [who = w->who, resource_id, work_id, outcome = w->outcome, policy = w->policy, use = w->use](storage::write_txn& tx) {
    auto refuse = [&](domain::error_id id, std::string field, std::string why) {
      outcome->refusal = domain::api_error{id, "The Resource cannot be promoted: " + why + ".", {{field, why}}};
      return false;
    };
    if (!tx.catalog().get(storage::catalog_kind::work, who.tenant_id, work_id))
      return refuse(domain::error_id::work_not_found, "id", "no such Work in this tenant");
    auto header = tx.resources().header(who.tenant_id, resource_id);
    if (!header) return refuse(domain::error_id::resource_not_found, "/resource_id", "no such Resource in this tenant");
    if (!header->work_id.empty())
      return refuse(domain::error_id::resource_not_staged, "/resource_id", "the Resource is attached to a Work already");
    auto current = tx.resources().get(who.tenant_id, resource_id);
    auto at = domain::iso8601_now();
    auto record = domain::promoted_record_json(*current, work_id, at, domain::random_id("upd_"));
    header->work_id = work_id;
    tx.resources().put(who.tenant_id, resource_id, *header, record);
    record_activity(tx, who, "PROMOTION", "resource", resource_id, {}, {}, at);
    std::string hash;
    outcome->reply = resource_answer(tx, *policy, who.tenant_id, 200, record, use, &hash);
    log_change(tx, who.tenant_id, storage::change_op::promoted, storage::change_kind::resource, resource_id,
               {header->version, hash, {}});
    return true;
  };
  write_with_access(run, resource_id, domain::access_role::writer, std::move(promote), w->outcome, "The promotion");
}

}  // namespace cl::actors
