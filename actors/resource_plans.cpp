// Resources: POST /resources, GET /resources/{id}.

#include "actors/access.hpp"
#include "actors/plan_support.hpp"
#include "actors/resource_stitch.hpp"
#include "actors/plans.hpp"
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

/// Layer 2 first (403 ACCESS_DENIED without `needed`), then the Resource's current record, which
/// `k` gets. A grant implies the Resource exists; `missing` answers the race with nothing.
void with_granted_resource(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                           const std::string& id, domain::access_role needed, domain::error_id missing,
                           std::function<void(std::shared_ptr<std::string>)> k, reply_fn done) {
  with_access(
    self, ctx, id, needed,
    [self, ctx, id, missing, k, done](domain::access_role) {
      ask(
        self, *ctx, done, ctx->actors->reader, "record reader",
        [k, done, missing](fetch_outcome& found) {
          if (!found.found) return done(domain::api_reply::failure(missing, "The Resource does not exist."));
          k(std::make_shared<std::string>(std::move(found.json)));
        },
        fetch_atom_v, ctx->who.tenant_id, id);
    },
    done);
}


}  // namespace

void plan_create_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto parsed = json_body(ctx->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return done(std::move(*refusal));
  auto draft = domain::parse_resource_create(std::get<json::object>(parsed));
  if (auto* e = std::get_if<domain::api_error>(&draft)) return done(domain::api_reply::from(std::move(*e)));
  auto d = std::make_shared<domain::resource_draft>(std::move(std::get<domain::resource_draft>(draft)));
  domain::resource_identity ids;
  ids.tenant = ctx->who.tenant_id;
  ids.id = domain::random_id("res_");
  ids.version = domain::random_id("ver_");
  ids.created = ids.updated = domain::iso8601_now();
  auto outcome = std::make_shared<write_outcome>();
  auto who = ctx->who;
  auto purpose = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return done(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  auto policy = write_policy(*ctx);
  storage::mutation create = [d, ids, who, outcome, policy, use](storage::write_txn& tx) mutable {
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
    tx.resources().put(ids.tenant, ids.id, record);
    tx.resources().put_version(ids.tenant, ids.id, ids.version, record);
    // The creator is the first owner (layer 2).
    domain::access_grant owner{ids.id, who.subject, domain::access_role::owner, who.subject, ids.created};
    tx.grants().put(ids.tenant, owner);
    record_activity(tx, who, d->activity_type, "resource", ids.id, d->agents, d->tooling, ids.created);
    log_change(tx, ids.tenant, storage::change_op::created, storage::change_kind::resource, ids.id);
    outcome->reply = resource_answer(tx, *policy, ids.tenant, 201, record, use);
    outcome->reply->headers.emplace_back("Location", "/v0/content-lake/resources/" + ids.id);
    return true;
  };
  write_then(self, ctx, std::move(create), outcome, "The Resource", done);
}

namespace {

/// Presents stored Resource records as list items: each with its `rights` (resolved now, all in
/// one ask) and `hash`, and as `use` may see it (layer 3: without content the rights do not
/// allow). `summary` items (a version list) never carry content or an update_token.
item_presenter resource_items(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx,
                              domain::content_use use, bool summary) {
  return [self, ctx, use, summary](std::vector<std::string> records,
                                   std::function<void(std::optional<std::vector<std::string>>)> k) {
    if (records.empty()) return k(std::move(records));
    if (!ctx->actors->rights) return k(std::nullopt);
    std::vector<std::string> works;
    for (const auto& r : records) works.push_back(storage::fields_of(r).work_id);
    auto shared = std::make_shared<std::vector<std::string>>(std::move(records));
    self->request(ctx->actors->rights, ctx->timeout, resolve_atom_v, ctx->who.tenant_id, std::move(works))
      .then(
        [shared, k, use, summary](std::vector<domain::resolved_rights>& rights) {
          std::vector<std::string> items;
          for (std::size_t i = 0; i < shared->size(); ++i) {
            const auto& record = (*shared)[i];
            auto item = domain::content_as_allowed(
              domain::compose_resource(record, rights[i].json, domain::resource_hash(record, rights[i].digest_input)),
              rights[i], use);
            if (summary) {
              auto o = json::parse(item).as_object();
              o.erase("content");
              o.erase("update_token");
              item = json::serialize(o);
            }
            items.push_back(std::move(item));
          }
          k(std::move(items));
        },
        [k](caf::error&) { k(std::nullopt); });
  };
}

/// NDJSON: one content block per line, produced one chunk at a time from the parsed record.
domain::api_reply ndjson_reply(const std::string& record) {
  auto doc = std::make_shared<json::value>(json::parse(record));
  auto index = std::make_shared<std::size_t>(0);
  domain::api_reply r;
  r.content_type = "application/x-ndjson";
  r.next_chunk = [doc, index]() -> std::optional<std::string> {
    const auto& blocks = doc->as_object().at("content").as_object().at("blocks").as_array();
    if (*index >= blocks.size()) return std::nullopt;
    return json::serialize(blocks[(*index)++]) + "\n";
  };
  return r;
}

}  // namespace

void plan_get_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  const auto& id = ctx->param("id");
  // Refusals that need no data come before anything is fetched: rendering, then field mask.
  auto negotiated = domain::negotiate(query_param(ctx->request.query, "format"), ctx->request.accept);
  if (auto* e = std::get_if<domain::api_error>(&negotiated)) return done(domain::api_reply::from(std::move(*e)));
  auto rendering = std::get<domain::rendering>(negotiated);
  std::optional<domain::field_mask> mask;
  if (auto fields = query_param(ctx->request.query, "fields"); !fields.empty()) {
    if (rendering != domain::rendering::json)
      return done(domain::api_reply::failure(domain::error_id::invalid_argument, "fields applies to JSON reads only.",
                                             {{"fields", "not allowed with NDJSON or Markdown"}}));
    auto parsed = domain::parse_field_mask(fields, domain::resource_fields());
    if (auto* e = std::get_if<domain::api_error>(&parsed)) return done(domain::api_reply::from(std::move(*e)));
    mask = std::get<domain::field_mask>(parsed);
    // Spec 4.2.5: naming a commercial field needs the scope; `*` just leaves them out without it.
    if (names_commercial_terms(*mask) && !ctx->who.has_scope("contracts.commercial.read"))
      return done(domain::api_reply::failure(domain::error_id::scope_missing,
                                             "The token does not carry the scope contracts.commercial.read, which "
                                             "rights.commercial_terms needs.",
                                             {{"fields", "rights.commercial_terms requires contracts.commercial.read"}}));
  }
  auto purpose = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return done(std::move(*refusal));
  // Reading content, or anything derived from it, is a use of it (layer 3); a metadata-only
  // field mask is not.
  bool uses_content = rendering != domain::rendering::json || domain::reveals_content(mask ? &*mask : nullptr);
  auto use = std::get<domain::content_use>(purpose);
  auto version = query_param(ctx->request.query, "version");
  auto on_record = [self, ctx, done, id, mask, rendering, version, uses_content, use](fetch_outcome& found) {
        if (!found.found)
          return version.empty() ? done(not_found(domain::error_id::resource_not_found, "Resource", id))
                                 : done(not_found(domain::error_id::version_not_found, "Resource version", id));
        auto record = std::make_shared<std::string>(std::move(found.json));
        with_rights(
            self, ctx, storage::fields_of(*record).work_id,
            [self, ctx, done, record, mask, rendering, uses_content, use](const domain::resolved_rights& rights) {
              if (auto refusal = domain::refuse_content(rights, use, uses_content))
                return done(domain::api_reply::from(std::move(*refusal)));
              domain::api_reply r;
              // The body depends on the token (tenant, rights), so shared caches must not keep it.
              r.headers.emplace_back("Cache-Control", "private, max-age=1");
              r.headers.emplace_back("Vary", "Accept");
              if (rendering == domain::rendering::ndjson) {
                auto streamed = ndjson_reply(*record);
                streamed.headers = std::move(r.headers);
                return done(std::move(streamed));
              }
              if (rendering == domain::rendering::markdown) {
                r.content_type = "text/markdown; charset=utf-8";
                r.body = domain::render_markdown(json::parse(*record).as_object().at("content"));
                return done(std::move(r));
              }
              auto hash = domain::resource_hash(*record, rights.digest_input);
              r.headers.emplace_back("ETag", "\"" + hash + "\"");
              if (domain::if_none_match_hits(ctx->request.if_none_match, hash)) {
                r.status = 304;
                r.content_type.clear();
                return done(std::move(r));
              }
              auto full = domain::compose_resource(*record, rights.json, hash);
              if (!mask) {
                r.body = std::move(full);
                return done(std::move(r));
              }
              // Stitched parts are fetched only when the mask names them.
              auto object = std::make_shared<json::object>(json::parse(full).as_object());
              stitch_resource(self, ctx, *mask, object,
                              [done, object, mask, r = std::move(r)](std::optional<domain::api_reply> failure) mutable {
                                if (failure) return done(std::move(*failure));
                                r.body = json::serialize(domain::apply_resource_mask(*object, *mask));
                                done(std::move(r));
                              });
            },
            done);
  };
  // Layer 2 before anything about the Resource is looked at (permission before existence).
  with_access(
    self, ctx, id, domain::access_role::reader,
    [self, ctx, done, id, version, on_record](domain::access_role) {
      if (version.empty()) return ask(self, *ctx, done, ctx->actors->reader, "record reader", on_record, fetch_atom_v,
                                      ctx->who.tenant_id, id);
      // a snapshot (POST .../versions)
      ask(self, *ctx, done, ctx->actors->reader, "record reader", on_record, fetch_atom_v,
          storage::version_ref{ctx->who.tenant_id, id, version});
    },
    done);
}

}  // namespace cl::actors

namespace cl::actors {

void plan_promote_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto parsed = json_body(ctx->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return done(std::move(*refusal));
  auto& body = std::get<json::object>(parsed);
  if (auto refusal = unknown_members(body, {"resource_id"})) return done(std::move(*refusal));
  auto* rid = body.if_contains("resource_id");
  if (!rid || !rid->is_string() || std::string_view{rid->as_string()}.substr(0, 4) != "res_")
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "Name the staged Resource to promote.",
                                           {{"/resource_id", "a res_ id"}}));
  std::string resource_id{rid->as_string()};
  std::string work_id = ctx->param("id");
  auto outcome = std::make_shared<write_outcome>();
  auto who = ctx->who;
  auto purpose = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return done(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  auto policy = write_policy(*ctx);
  storage::mutation promote = [who, resource_id, work_id, outcome, policy, use](storage::write_txn& tx) {
    auto refuse = [&](domain::error_id id, std::string field, std::string why) {
      outcome->refusal = domain::api_error{id, "The Resource cannot be promoted: " + why + ".", {{field, why}}};
      return false;
    };
    if (!tx.catalog().get(storage::catalog_kind::work, who.tenant_id, work_id))
      return refuse(domain::error_id::work_not_found, "id", "no such Work in this tenant");
    auto current = tx.resources().get(who.tenant_id, resource_id);
    if (!current) return refuse(domain::error_id::resource_not_found, "/resource_id", "no such Resource in this tenant");
    if (!storage::fields_of(*current).work_id.empty())
      return refuse(domain::error_id::resource_not_staged, "/resource_id", "the Resource is attached to a Work already");
    auto at = domain::iso8601_now();
    auto record = domain::promoted_record_json(*current, work_id, at, domain::random_id("upd_"));
    tx.resources().put(who.tenant_id, resource_id, record);
    record_activity(tx, who, "PROMOTION", "resource", resource_id, {}, {}, at);
    log_change(tx, who.tenant_id, storage::change_op::promoted, storage::change_kind::resource, resource_id);
    outcome->reply = resource_answer(tx, *policy, who.tenant_id, 200, record, use);
    return true;
  };
  with_access(
    self, ctx, resource_id, domain::access_role::writer,
    [self, ctx, done, outcome, promote = std::move(promote)](domain::access_role) mutable {
      write_then(self, ctx, std::move(promote), outcome, "The promotion", done);
    },
    done);
}

void plan_get_entities(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  const auto& id = ctx->param("id");
  with_granted_resource(
    self, ctx, id, domain::access_role::reader, domain::error_id::resource_not_found,
    [self, ctx, done, id](std::shared_ptr<std::string> record) {
      with_content_use(
        self, ctx, storage::fields_of(*record).work_id,
        [done, id, record](const domain::resolved_rights&) {
          auto entities = domain::entity_overlay(json::parse(*record).as_object().at("content"));
          auto r = json_reply(200, json::serialize(json::object{{"resource_id", id}, {"entities", std::move(entities)}}));
          r.headers.emplace_back("Cache-Control", "private, max-age=1");
          done(std::move(r));
        },
        done);
    },
    done);
}

}  // namespace cl::actors

namespace cl::actors {

void plan_list_resources(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto work = query_param(ctx->request.query, "work_id");
  auto type = query_param(ctx->request.query, "type");
  auto language = query_param(ctx->request.query, "language");
  auto staged = query_param(ctx->request.query, "staged");
  if (!staged.empty() && staged != "true" && staged != "false")
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "staged must be true or false.",
                                           {{"staged", "true or false"}}));
  auto purpose = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return done(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  std::vector<std::pair<std::string, std::string>> filters;
  if (!work.empty()) filters.emplace_back("work_id", work);
  if (!type.empty()) filters.emplace_back("type", type);
  if (!language.empty()) filters.emplace_back("language", language);
  if (!staged.empty()) filters.emplace_back("staged", staged);
  item_presenter present = resource_items(self, ctx, use, false);
  if (!ctx->actors->rights) return done(backend_unavailable("rights resolver"));
  // Layer 2: only Resources the caller (or one of its groups) holds a grant on; the store walks
  // the by-principal grant index, so a page costs the page whatever the tenant holds.
  with_principals(
    self, ctx,
    [self, ctx, done, filters, work, type, language, staged, present = std::move(present)](
      std::vector<std::string> principals) mutable {
      storage::resource_query q;
      q.tenant = ctx->who.tenant_id;
      q.readable_by = std::move(principals);
      q.work_id = work;
      q.type = type;
      q.language = language;
      if (!staged.empty()) q.staged = staged == "true";
      answer_query(ctx, "resources", filters, query_pages(self, ctx, done, ctx->actors->reader, "record reader", q), done,
                   std::move(present));
    },
    done);
}

}  // namespace cl::actors

namespace cl::actors {

namespace {

/// PUT and PATCH: check the update_token and write the new state in one mutation, so no
/// concurrent write can slip between the check and the write.
void update_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done, bool merge) {
  auto parsed = json_body(ctx->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return done(std::move(*refusal));
  auto body = std::make_shared<json::object>(std::move(std::get<json::object>(parsed)));
  std::shared_ptr<domain::resource_change> replacement;
  if (!merge) {
    auto change = domain::parse_resource_replace(*body);
    if (auto* e = std::get_if<domain::api_error>(&change)) return done(domain::api_reply::from(std::move(*e)));
    replacement = std::make_shared<domain::resource_change>(std::move(std::get<domain::resource_change>(change)));
  } else if (!body->contains("update_token")) {
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "The update_token is required.",
                                           {{"/update_token", "is required: pass the update_token of your last read"}}));
  }
  auto id = ctx->param("id");
  auto who = ctx->who;
  auto outcome = std::make_shared<write_outcome>();
  auto purpose = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return done(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  auto policy = write_policy(*ctx);
  storage::mutation update = [who, id, body, replacement, outcome, policy, use, merge](storage::write_txn& tx) {
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
    tx.resources().put(who.tenant_id, id, record);
    outcome->reply = resource_answer(tx, *policy, who.tenant_id, 200, record, use);
    record_activity(tx, who, "UPDATE", "resource", id, change.draft.agents, change.draft.tooling, ids.updated);
    log_change(tx, who.tenant_id, merge ? storage::change_op::patched : storage::change_op::replaced,
               storage::change_kind::resource, id);
    return true;
  };
  with_access(
    self, ctx, id, domain::access_role::writer,
    [self, ctx, done, outcome, update = std::move(update)](domain::access_role) mutable {
      write_then(self, ctx, std::move(update), outcome, "The change", done);
    },
    done);
}

}  // namespace

void plan_replace_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  update_resource(self, std::move(ctx), std::move(done), false);
}

void plan_patch_resource(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  update_resource(self, std::move(ctx), std::move(done), true);
}

}  // namespace cl::actors

namespace cl::actors {

void plan_create_version(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  if (!ctx->request.body.empty()) {
    auto parsed = json_body(ctx->request);
    if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return done(std::move(*refusal));
    if (auto refusal = unknown_members(std::get<json::object>(parsed), {})) return done(std::move(*refusal));
  }
  auto id = ctx->param("id");
  auto who = ctx->who;
  auto outcome = std::make_shared<write_outcome>();
  auto purpose = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return done(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  auto policy = write_policy(*ctx);
  storage::mutation snapshot = [who, id, outcome, policy, use](storage::write_txn& tx) {
    auto current = tx.resources().get(who.tenant_id, id);
    if (!current) {
      outcome->refusal = domain::api_error{domain::error_id::resource_not_found, "No such Resource exists in this tenant.", {}};
      return false;
    }
    auto version = storage::fields_of(*current).version;
    auto answer = [&](int status, const std::string& record) {
      outcome->reply = resource_answer(tx, *policy, who.tenant_id, status, record, use);
      outcome->reply->headers.emplace_back("Location", "/v0/content-lake/resources/" + id + "?version=" + version);
      return true;
    };
    // This content is snapshotted already: the same version, 200.
    if (auto existing = tx.resources().version(who.tenant_id, id, version)) return answer(200, *existing);
    tx.resources().put_version(who.tenant_id, id, version, *current);
    record_activity(tx, who, "VERSION", "resource", id, {}, {}, domain::iso8601_now());
    log_change(tx, who.tenant_id, storage::change_op::snapshotted, storage::change_kind::resource, id);
    return answer(201, *current);
  };
  with_access(
    self, ctx, id, domain::access_role::writer,
    [self, ctx, done, outcome, snapshot = std::move(snapshot)](domain::access_role) mutable {
      write_then(self, ctx, std::move(snapshot), outcome, "The snapshot", done);
    },
    done);
}

void plan_list_versions(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto id = ctx->param("id");
  auto purpose = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return done(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  with_access(
    self, ctx, id, domain::access_role::reader,
      [self, ctx, done, id, use](domain::access_role) {
        // Summaries: each snapshot without its content (read one with ?version= for that), with
        // its rights as a `?version=` read resolves them.
        auto summarize = resource_items(self, ctx, use, true);
        storage::version_query q;
        q.tenant = ctx->who.tenant_id;
        q.resource_id = id;
        answer_query(ctx, "versions", {{"resource_id", id}},
                     query_pages(self, ctx, done, ctx->actors->reader, "record reader", q), done, std::move(summarize));
      },
      done);
}

}  // namespace cl::actors

namespace cl::actors {

namespace {

/// A content unit id: `cu_` + base64url(resource id, '/', block key). Opaque to clients; it
/// leads back to its Resource, so units need no table of their own.
std::string unit_id(const std::string& resource_id, std::string_view block_key) {
  return "cu_" + domain::base64url_encode(resource_id + "/" + std::string{block_key});
}

std::optional<std::pair<std::string, std::string>> parse_unit_id(const std::string& id) {
  if (id.rfind("cu_", 0) != 0) return std::nullopt;
  auto raw = domain::base64url_decode(std::string_view{id}.substr(3));
  if (!raw) return std::nullopt;
  auto slash = raw->find('/');
  if (slash == std::string::npos || raw->rfind("res_", 0) != 0) return std::nullopt;
  return std::make_pair(raw->substr(0, slash), raw->substr(slash + 1));
}

std::string unit_json(const std::string& resource_id, const json::object& record, const json::value& block,
                      std::size_t position) {
  const auto& b = block.as_object();
  json::object unit{{"id", unit_id(resource_id, b.at("key").as_string())},
                    {"resource_id", resource_id},
                    {"version", record.at("version")},
                    {"block_key", b.at("key")},
                    {"position", position},
                    {"type", b.at("type")},
                    {"block", block}};
  return json::serialize(unit);
}

}  // namespace

void plan_list_content_units(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  auto resource_id = query_param(ctx->request.query, "resource_id");
  if (resource_id.empty())
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "Name the Resource whose units to list.",
                                           {{"resource_id", "is required"}}));
  auto size = domain::page_size_from(query_param(ctx->request.query, "page_size"));
  if (auto* e = std::get_if<domain::api_error>(&size)) return done(domain::api_reply::from(std::move(*e)));
  auto page_size = std::get<std::size_t>(size);
  auto binding = "content-units?" + domain::canonical_query({{"resource_id", resource_id}});
  std::size_t start = 0;
  if (auto token = query_param(ctx->request.query, "page_token"); !token.empty()) {
    auto opened = ctx->page_tokens->open(token, ctx->who.tenant_id, binding);
    if (auto* e = std::get_if<domain::api_error>(&opened)) return done(domain::api_reply::from(std::move(*e)));
    start = std::stoul(std::get<std::string>(opened));
  }
  with_granted_resource(
    self, ctx, resource_id, domain::access_role::reader, domain::error_id::resource_not_found,
      [self, ctx, done, resource_id, page_size, binding, start](std::shared_ptr<std::string> stored) {
        with_content_use(
          self, ctx, storage::fields_of(*stored).work_id,
          [ctx, done, resource_id, page_size, binding, start, stored](const domain::resolved_rights&) {
            auto record = json::parse(*stored).as_object();
            const auto& blocks = record.at("content").as_object().at("blocks").as_array();
            std::string body = "{\"content_units\":[";
            std::size_t end = std::min(blocks.size(), start + page_size);
            for (std::size_t i = start; i < end; ++i) body += (i > start ? "," : "") + unit_json(resource_id, record, blocks[i], i);
            body += "]";
            if (end < blocks.size())
              body += ",\"next_page_token\":"
                      + domain::json_string(ctx->page_tokens->issue({ctx->who.tenant_id, binding, std::to_string(end)}));
            body += "}";
            auto r = json_reply(200, std::move(body));
            r.headers.emplace_back("Cache-Control", "private, max-age=1");
            done(std::move(r));
          },
          done);
      },
      done);
}

void plan_get_content_unit(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  const auto& id = ctx->param("id");
  auto parts = parse_unit_id(id);
  if (!parts)
    return done(domain::api_reply::failure(domain::error_id::content_unit_not_found, "No such content unit."));
  auto [resource_id, key] = *parts;
  with_granted_resource(
    self, ctx, resource_id, domain::access_role::reader, domain::error_id::content_unit_not_found,
      [self, ctx, done, resource_id, key](std::shared_ptr<std::string> stored) {
        with_content_use(
          self, ctx, storage::fields_of(*stored).work_id,
          [done, resource_id, key, stored](const domain::resolved_rights&) {
            auto record = json::parse(*stored).as_object();
            const auto& blocks = record.at("content").as_object().at("blocks").as_array();
            for (std::size_t i = 0; i < blocks.size(); ++i)
              if (blocks[i].as_object().at("key").as_string() == key) {
                auto r = json_reply(200, unit_json(resource_id, record, blocks[i], i));
                r.headers.emplace_back("Cache-Control", "private, max-age=1");
                return done(std::move(r));
              }
            done(domain::api_reply::failure(domain::error_id::content_unit_not_found,
                                            "The Resource no longer has this block."));
          },
          done);
      },
      done);
}

}  // namespace cl::actors
