// Resource reads: GET /resources/{id} (every rendering, masks, snapshots), GET /resources, GET .../entities.

#include "actors/access.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_paging.hpp"
#include "actors/plan_support.hpp"
#include "actors/resource_stitch.hpp"
#include "actors/plans.hpp"
#include "actors/representation_cache.hpp"
#include "actors/resource_support.hpp"
#include "domain/field_mask.hpp"
#include "domain/base64url.hpp"
#include "domain/content_format.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/layer3.hpp"
#include "domain/negotiation.hpp"
#include "domain/odrl.hpp"
#include "domain/page_token.hpp"
#include "domain/records.hpp"
#include "domain/resource.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <map>

namespace cl::actors {

namespace json = boost::json;

namespace {

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

namespace {

/// What a GET of one Resource asks for, checked before anything is fetched.
struct read_request {
  domain::rendering rendering = domain::rendering::json;
  std::optional<domain::field_mask> mask;
  domain::content_use use;
  bool uses_content = true;  ///< the answer shows content or something derived from it
  std::string version;       ///< a snapshot, or empty for the current version
};

/// Refusals that need no data come first: rendering, field mask (and its scope), declared use.
std::variant<read_request, domain::api_reply> parse_read(const request_context& ctx) {
  read_request rq;
  auto negotiated = domain::negotiate(query_param(ctx.request.query, "format"), ctx.request.accept);
  if (auto* e = std::get_if<domain::api_error>(&negotiated)) return domain::api_reply::from(std::move(*e));
  rq.rendering = std::get<domain::rendering>(negotiated);
  if (auto fields = query_param(ctx.request.query, "fields"); !fields.empty()) {
    if (rq.rendering != domain::rendering::json)
      return domain::api_reply::failure(domain::error_id::invalid_argument, "fields applies to JSON reads only.",
                                        {{"fields", "not allowed with NDJSON or Markdown"}});
    auto parsed = domain::parse_field_mask(fields, domain::resource_fields());
    if (auto* e = std::get_if<domain::api_error>(&parsed)) return domain::api_reply::from(std::move(*e));
    rq.mask = std::get<domain::field_mask>(parsed);
    // Spec 4.2.5: naming a commercial field needs the scope; `*` just leaves them out without it.
    if (names_commercial_terms(*rq.mask) && !ctx.who.has_scope("contracts.commercial.read"))
      return domain::api_reply::failure(domain::error_id::scope_missing,
                                        "The token does not carry the scope contracts.commercial.read, which "
                                        "rights.commercial_terms needs.",
                                        {{"fields", "rights.commercial_terms requires contracts.commercial.read"}});
  }
  auto purpose = request_use(ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return std::move(*refusal);
  rq.use = std::get<domain::content_use>(purpose);
  // Reading content, or anything derived from it, is a use of it (layer 3); a metadata-only
  // field mask is not.
  rq.uses_content = rq.rendering != domain::rendering::json || domain::reveals_content(rq.mask ? &*rq.mask : nullptr);
  rq.version = query_param(ctx.request.query, "version");
  return rq;
}

/// The headers a read of Resource `id` carries that follow from its record and rights, in order:
/// its rights as travel headers, caching, the edge keys. Without `Surrogate-Control`, which counts
/// down per answer: it goes at `surrogate_control_at`.
std::vector<std::pair<std::string, std::string>> read_headers(const request_context& ctx, const std::string& id,
                                                              const std::string& record,
                                                              const domain::resolved_rights& rights,
                                                              std::size_t& surrogate_control_at) {
  domain::api_reply r;
  r.headers.reserve(8);
  travel_headers(r, rights, id);
  // The body depends on the token (tenant, rights), so shared caches must not keep it.
  private_for_a_second(r);
  r.headers.emplace_back("Vary", "Accept");
  surrogate_control_at = r.headers.size();
  auto keys = resource_edge_key_list(ctx, id, record, rights);
  r.headers.emplace_back("Surrogate-Key", keys);
  r.headers.emplace_back("xkey", std::move(keys));
  return std::move(r.headers);
}

/// `kept` (what `read_headers` made) with this answer's `Surrogate-Control` at `at`.
std::vector<std::pair<std::string, std::string>> with_surrogate_control(
  const std::vector<std::pair<std::string, std::string>>& kept, std::size_t at, const request_context& ctx,
  const domain::resolved_rights& rights) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(kept.size() + 2);  // and the ETag
  auto split = kept.begin() + static_cast<std::ptrdiff_t>(at);
  out.assign(kept.begin(), split);
  if (auto control = surrogate_control(ctx.who, rights.valid_until)) out.push_back(std::move(*control));
  out.insert(out.end(), split, kept.end());
  return out;
}

/// The answer for a readable Resource `record` under `rights`: refused by layer 3, or rendered
/// (NDJSON, Markdown, JSON with ETag / 304, masked and stitched).
void answer_read(const plan_run& run, const read_request& rq, const std::string& record,
                 const domain::resolved_rights& rights) {
  if (auto refusal = domain::refuse_content(rights, rq.use, rq.uses_content)) {
    auto refused = domain::api_reply::from(std::move(*refusal));
    travel_headers(refused, rights, run->param("id"));
    return run.answer(std::move(refused));
  }
  const auto& id = run->param("id");
  if (rq.rendering == domain::rendering::ndjson) {
    auto streamed = ndjson_reply(record);
    std::size_t at = 0;
    streamed.headers = with_surrogate_control(read_headers(*run, id, record, rights, at), at, *run, rights);
    return run.answer(std::move(streamed));
  }
  bool markdown = rq.rendering == domain::rendering::markdown;
  // A rendering made before from the same record and rights is reused (actors/representation_cache.hpp).
  auto* cache = run->actors->representations.get();
  auto key = cache ? representation_cache::key(run->who.tenant_id, id, std::string{markdown ? "md" : "json"} + '@' + rq.version)
                   : std::string{};
  representation_cache::inputs from{record, rights.digest_input, rights.json};
  auto made = cache ? cache->find(key, from) : nullptr;
  if (!made) {
    auto fresh = std::make_shared<representation_cache::rendering>();
    if (markdown) {
      fresh->body = domain::render_markdown(json::parse(record).as_object().at("content"));
    } else {
      fresh->hash = domain::resource_hash(record, rights.digest_input);
      fresh->body = domain::compose_resource(record, rights.json, fresh->hash);
    }
    fresh->headers = read_headers(*run, id, record, rights, fresh->surrogate_control_at);
    made = fresh;
    if (cache) cache->insert(key, from, made);
  }
  domain::api_reply r;
  r.headers = with_surrogate_control(made->headers, made->surrogate_control_at, *run, rights);
  if (markdown) {
    r.content_type = "text/markdown; charset=utf-8";
    r.body = made->body;
    return run.answer(std::move(r));
  }
  const auto& hash = made->hash;
  // A caller refused the content reads its metadata only: no ETag (the hash covers the content),
  // so no 304 either.
  bool tagged = domain::content_allowed(rights, rq.use);
  if (tagged) r.headers.emplace_back("ETag", "\"" + hash + "\"");
  if (tagged && domain::if_none_match_hits(run->request.if_none_match, hash)) {
    r.status = 304;
    r.content_type.clear();
    return run.answer(std::move(r));
  }
  if (!rq.mask) {
    r.body = made->body;
    return run.answer(std::move(r));
  }
  const auto& full = made->body;
  // Stitched parts are fetched only when the mask names them.
  auto object = std::make_shared<json::object>(json::parse(full).as_object());
  auto mask = *rq.mask;
  // The ODRL policy only when named (`*` does not include it): a mask without it does not pay for
  // it; one that names it gets the text spliced in, never parsed into the DOM.
  auto policy = std::make_shared<std::string>();
  if (mask.names_member("rights", "odrl")) {
    *policy = domain::odrl_policy(
      rights, {run->who.tenant_id, run->who.subject, std::string_view{(*object)["uri"].as_string()}});
    (*object)["rights"].as_object()["odrl"] = nullptr;
  }
  stitch_resource(run, mask, object,
                  [run, object, mask, policy, r = std::move(r)](std::optional<domain::api_reply> failure) mutable {
                    if (failure) return run.answer(std::move(*failure));
                    r.body = domain::serialize_with_policy(domain::apply_resource_mask(*object, mask), *policy);
                    run.answer(std::move(r));
                  });
}

}  // namespace

void plan_get_resource(const plan_run& run) {
  const auto& id = run->param("id");
  auto parsed = parse_read(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto rq = std::make_shared<const read_request>(std::get<read_request>(std::move(parsed)));
  auto on_record = [run, id, rq](fetch_outcome& found) {
    if (!found.found)
      return rq->version.empty() ? run.answer(not_found(domain::error_id::resource_not_found, "Resource", id))
                                 : run.answer(not_found(domain::error_id::version_not_found, "Resource version", id));
    auto record = std::make_shared<std::string>(std::move(found.json));
    with_rights(run, storage::fields_of(*record).work_id,
                [run, record, rq](const domain::resolved_rights& rights) { answer_read(run, *rq, *record, rights); });
  };
  // Layer 2 before anything about the Resource is looked at (permission before existence).
  with_access(run, id, domain::access_role::reader, [run, id, rq, on_record](domain::access_role) {
    if (rq->version.empty()) return fetch_resource(run, id, on_record);
    // a snapshot (POST .../versions)
    ask(run, run->actors->get<reader_actor>(), "record reader", on_record, fetch_atom_v,
        storage::version_ref{run->who.tenant_id, id, rq->version});
  });
}

void plan_list_resources(const plan_run& run) {
  auto work = query_param(run->request.query, "work_id");
  auto type = query_param(run->request.query, "type");
  auto language = query_param(run->request.query, "language");
  auto staged = query_param(run->request.query, "staged");
  if (!staged.empty() && staged != "true" && staged != "false")
    return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument, "staged must be true or false.",
                                                 {{"staged", "true or false"}}));
  auto purpose = request_use(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return run.answer(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  // `fields` masks each item as a read of it would (rights.odrl included when named).
  auto masked = list_mask(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&masked)) return run.answer(std::move(*refusal));
  auto mask = std::get<std::shared_ptr<const domain::field_mask>>(std::move(masked));
  std::vector<std::pair<std::string, std::string>> filters;
  if (!work.empty()) filters.emplace_back("work_id", work);
  if (!type.empty()) filters.emplace_back("type", type);
  if (!language.empty()) filters.emplace_back("language", language);
  if (!staged.empty()) filters.emplace_back("staged", staged);
  item_presenter present = resource_items(run, use, false, mask);
  if (!run->actors->get<rights_actor>()) return run.answer(backend_unavailable("rights resolver", backend_error::gone));
  // Layer 2: only Resources the caller (or one of its groups) holds a grant on; the store walks
  // the by-principal grant index, so a page costs the page whatever the tenant holds.
  with_principals(run, [run, filters, work, type, language, staged,
                        present = std::move(present)](std::vector<std::string> principals) mutable {
    storage::resource_query q;
    q.tenant = run->who.tenant_id;
    q.readable_by = std::move(principals);
    q.work_id = work;
    q.type = type;
    q.language = language;
    if (!staged.empty()) q.staged = staged == "true";
    answer_query(run, "resources", filters, query_pages(run, run->actors->get<reader_actor>(), "record reader", q),
                 std::move(present), /*masks_items=*/true);
  });
}

void plan_get_resource_odrl(const plan_run& run) {
  const auto& id = run->param("id");
  // Found and refused exactly as the Resource is (layer 2); never refused by layer 3: the policy
  // is how a caller refused the content learns why.
  with_granted_resource(
    run, id, domain::access_role::reader, domain::error_id::resource_not_found,
    [run, id](std::shared_ptr<std::string> record) {
      with_rights(run, storage::fields_of(*record).work_id, [run, id, record](const domain::resolved_rights& rights) {
        auto uri = json::parse(*record).as_object().at("uri").as_string();
        domain::odrl_parties parties{run->who.tenant_id, run->who.subject, std::string_view{uri}};
        auto tag = "odrl-" + domain::odrl_tag(rights, parties);
        domain::api_reply r;
        private_for_a_second(r);
        r.headers.emplace_back("ETag", "\"" + tag + "\"");
        resource_edge_keys(r, *run, id, *record, rights);
        if (domain::if_none_match_hits(run->request.if_none_match, tag)) {
          r.status = 304;
          r.content_type.clear();
          return run.answer(std::move(r));
        }
        r.content_type = "application/ld+json";
        r.body = domain::odrl_policy(rights, parties);
        run.answer(std::move(r));
      });
    });
}

void plan_get_entities(const plan_run& run) {
  const auto& id = run->param("id");
  with_granted_resource(
    run, id, domain::access_role::reader, domain::error_id::resource_not_found,
    [run, id](std::shared_ptr<std::string> record) {
      with_content_use(
        run, id, storage::fields_of(*record).work_id, [run, id, record](const domain::resolved_rights& rights) {
          auto entities = domain::entity_overlay(json::parse(*record).as_object().at("content"));
          auto r = json_reply(200, json::serialize(json::object{{"resource_id", id}, {"entities", std::move(entities)}}));
          private_for_a_second(r);
          travel_headers(r, rights, id);
          resource_edge_keys(r, *run, id, *record, rights);
          run.answer(std::move(r));
        });
    });
}

}  // namespace cl::actors
