#include "actors/plan_support.hpp"
#include "domain/clock.hpp"

#include "actors/access.hpp"
#include "actors/contracts.hpp"
#include "actors/rights.hpp"
#include "domain/idempotency.hpp"
#include "domain/resource.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/layer3.hpp"
#include "domain/sign_in.hpp"
#include "domain/page_token.hpp"
#include "domain/query.hpp"
#include "domain/records.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

namespace cl::actors {

namespace json = boost::json;

domain::api_reply json_reply(int status, std::string body) {
  domain::api_reply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::variant<json::object, domain::api_reply> json_body(const domain::api_request& request) {
  auto type = std::string_view{request.content_type}.substr(0, request.content_type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  if (type != "application/json" && type != "application/merge-patch+json")
    return domain::api_reply::failure(domain::error_id::unsupported_media_type,
                                      "Send the body as application/json.",
                                      {{"Content-Type", "must be application/json (or application/merge-patch+json)"}});
  boost::system::error_code ec;
  auto value = json::parse(request.body, ec);
  if (ec || !value.is_object())
    return domain::api_reply::failure(domain::error_id::invalid_argument, "The body is not a JSON object.",
                                      {{"body", ec ? "not valid JSON (UTF-8)" : "must be a JSON object"}});
  return std::move(value.as_object());
}

std::optional<domain::api_reply> unknown_members(const json::object& body, std::initializer_list<std::string_view> allowed) {
  std::vector<domain::error_detail> details;
  for (const auto& member : body) {
    std::string_view key{member.key().data(), member.key().size()};
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      details.push_back({"/" + std::string{key}.substr(0, 64), "unknown member"});
  }
  if (details.empty()) return std::nullopt;
  return domain::api_reply::failure(domain::error_id::invalid_argument, "The body has members this operation does not know.",
                                    std::move(details));
}

domain::api_reply invalid_field(const std::string& field, const std::string& why) {
  return domain::api_reply::failure(domain::error_id::invalid_argument,
                                    "The request is not valid: " + field + " " + why + ".", {{field, why}});
}

std::string query_param(std::string_view query, std::string_view name) {
  std::size_t start = 0;
  while (start <= query.size()) {
    auto end = query.find('&', start);
    auto pair = query.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    auto eq = pair.find('=');
    if (domain::decode_query_component(pair.substr(0, eq)) == name)  // names are read decoded, as caches do
      return domain::decode_query_component(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return {};
}

std::string record_activity(storage::write_txn& tx, const domain::principal& who, const std::string& type,
                            const std::string& kind, const std::string& id, const std::vector<std::string>& extra_agents,
                            const std::vector<std::string>& tooling, const std::string& at) {
  auto agent = domain::derived_agent(who);
  if (!tx.catalog().get(storage::catalog_kind::agent, who.tenant_id, agent.id))
    tx.catalog().put(storage::catalog_kind::agent, who.tenant_id, agent.id, domain::agent_record_json(agent, who, at));
  domain::activity_input a;
  a.id = domain::random_id("act_");
  a.type = type;
  a.target_kind = kind;
  a.target_id = id;
  a.performed_by.push_back(agent.id);
  for (const auto& extra : extra_agents)
    if (extra != agent.id) a.performed_by.push_back(extra);
  a.tooling = tooling;
  a.at = at;
  tx.activities().put(who.tenant_id, a.id, storage::activity_header{kind == "resource" ? id : std::string{}, type},
                      domain::activity_record_json(a));
  return a.id;
}

void log_change(storage::write_txn& tx, const std::string& tenant, storage::change_op op, storage::change_kind kind,
                const std::string& id) {
  storage::change_entry e;
  e.tenant = tenant;
  e.kind = kind;
  e.id = id;
  e.op = op;
  e.at_ms = domain::now_ms();
  tx.log_change(e);
}

namespace {


/// `m`, run so that its answer is stored in the ledger under `guard` in the same transaction. A
/// record that is there already (a concurrent request with the key committed first) is answered
/// from (`*replay`) and nothing is written.
storage::mutation guarded(storage::mutation m, std::shared_ptr<write_outcome> outcome,
                          std::shared_ptr<const idempotency_guard> guard,
                          std::shared_ptr<std::optional<domain::api_reply>> replay) {
  return [m = std::move(m), outcome, guard, replay](storage::write_txn& tx) {
    replay->reset();
    auto now = domain::now_ms();
    auto found = domain::look_up(tx.ledger().record(guard->ledger_key), guard->fingerprint,
                                 guard->retention_ms, now);
    if (found.kind != domain::ledger_lookup::fresh) {
      *replay = found.kind == domain::ledger_lookup::replay ? domain::replay_of(found.answer) : domain::key_mismatch_reply();
      return false;
    }
    // Past retention (not pruned yet): the key is fresh again; its old index entry goes.
    if (found.expired_ms)
      tx.ledger().drop_expired(guard->ledger_key, *found.expired_ms);
    auto before = tx.writes();
    bool kept = m(tx);
    domain::api_reply answer;
    if (kept && outcome->reply) {
      answer = *outcome->reply;
    } else if (!kept && outcome->refusal && outcome->store_refusal && tx.writes() == before) {
      answer = domain::api_reply::from(*outcome->refusal);  // a failure after execution began: stored too
    } else {
      return kept;  // nothing that can be stored faithfully: the write stands or falls alone
    }
    domain::ledger_record record{guard->fingerprint, now, domain::stored_from(answer)};
    tx.ledger().put(guard->ledger_key, now, domain::ledger_record_json(record));
    return true;
  };
}

}  // namespace

void write_then(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx, storage::mutation m,
                std::shared_ptr<write_outcome> outcome, const std::string& what, reply_fn done,
                std::function<void()> after_commit) {
  // A mutation may run more than once (record_store.hpp): only its last run's outcome counts.
  storage::mutation fresh = [m = std::move(m), outcome](storage::write_txn& tx) {
    outcome->refusal.reset();
    outcome->reply.reset();
    outcome->store_refusal = true;
    return m(tx);
  };
  auto replay = std::make_shared<std::optional<domain::api_reply>>();
  if (ctx->idempotency) fresh = guarded(std::move(fresh), outcome, ctx->idempotency, replay);
  ask(
    self, *ctx, done, ctx->actors->get<writer_actor>(), "writer",
    [outcome, replay, what, after_commit, done](bool stored) {
      if (*replay) return done(std::move(**replay));
      if (stored && outcome->reply) {
        if (after_commit) after_commit();
        return done(std::move(*outcome->reply));
      }
      if (outcome->refusal) return done(domain::api_reply::from(std::move(*outcome->refusal)));
      done(domain::api_reply::failure(domain::error_id::internal, what + " could not be stored."));
    },
    write_atom_v, std::move(fresh));
}

void write_with_access(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                       const std::string& resource_id, domain::access_role needed, storage::mutation m,
                       std::shared_ptr<write_outcome> outcome, const std::string& what, reply_fn done,
                       std::function<void()> after_commit) {
  with_access(
    self, ctx, resource_id, needed,
    [self, ctx, done, outcome, what, m = std::move(m), after_commit = std::move(after_commit)](domain::access_role) mutable {
      write_then(self, ctx, std::move(m), outcome, what, done, std::move(after_commit));
    },
    done);
}

domain::api_reply resource_answer(const storage::write_txn& tx, const domain::platform_policy& policy,
                                  const std::string& tenant, int status, const std::string& record,
                                  const domain::content_use& use) {
  auto work = storage::fields_of(record).work_id;
  auto now = domain::now_ms() / 1000;
  auto rights = resolve_work(work, work.empty() ? std::vector<std::string>{} : tx.contracts().for_work(tenant, work),
                             policy, now);
  auto hash = domain::resource_hash(record, rights.digest_input);
  auto r = json_reply(status, domain::content_as_allowed(domain::compose_resource(record, rights.json, hash), rights, use));
  if (domain::content_allowed(rights, use)) r.headers.emplace_back("ETag", "\"" + hash + "\"");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

std::optional<domain::api_error> sensitive_refusal(const request_context& ctx, std::string_view operation) {
  return domain::recent_sign_in_refusal(ctx.who, domain::now_ms() / 1000, ctx.recent_sign_in_seconds, operation);
}

std::shared_ptr<const domain::platform_policy> write_policy(const request_context& ctx) {
  if (ctx.actors->policy) return ctx.actors->policy->get();
  return std::make_shared<const domain::platform_policy>();
}

domain::api_reply not_found(domain::error_id missing, const std::string& what, const std::string& id) {
  auto shown = id.size() > 64 ? id.substr(0, 64) + "..." : id;
  return domain::api_reply::failure(missing, "No " + what + " " + shown + " exists in this tenant.");
}

namespace {

/// The page asked for: its size and the position after which it starts (from `page_token`,
/// bound to the tenant and the list's filters), or the refusal of a bad size or token.
struct list_window {
  std::size_t page_size = 50;
  std::string after;
  std::string binding;
};

std::variant<list_window, domain::api_reply> window_of(const request_context& ctx, const std::string& collection,
                                                       const std::vector<std::pair<std::string, std::string>>& filters) {
  list_window w;
  // Field masks shape one item's read; a list answers whole items (or their summaries).
  if (!query_param(ctx.request.query, "fields").empty())
    return domain::api_reply::failure(domain::error_id::invalid_argument,
                                      "fields is not supported on lists: read one item with fields for a masked answer.",
                                      {{"fields", "not supported on list routes"}});
  auto size = domain::page_size_from(query_param(ctx.request.query, "page_size"));
  if (auto* e = std::get_if<domain::api_error>(&size)) return domain::api_reply::from(std::move(*e));
  w.page_size = std::get<std::size_t>(size);
  w.binding = collection + "?" + domain::canonical_query(filters);
  if (auto token = query_param(ctx.request.query, "page_token"); !token.empty()) {
    auto opened = ctx.page_tokens->open(token, ctx.who.tenant_id, w.binding);
    if (auto* e = std::get_if<domain::api_error>(&opened)) return domain::api_reply::from(std::move(*e));
    w.after = std::get<std::string>(opened);
  }
  return w;
}

/// Answers `page` (asked with the window's size + 1): `{"<collection>":[...],"next_page_token"}`,
/// the token absent on the last page; items through `present` when set.
void answer_page(const std::shared_ptr<const request_context>& ctx, const list_window& w, const std::string& collection,
                 scan_result page, const item_presenter& present, const reply_fn& done) {
  std::string resume;
  if (page.entries.size() > w.page_size) {
    page.entries.resize(w.page_size);
    resume = page.entries.back().first;
  } else if (!page.exhausted && !page.resume_after.empty()) {
    resume = page.resume_after;  // the filter's budget ran out before the page filled
  }
  std::string next;
  if (!resume.empty()) next = ctx->page_tokens->issue({ctx->who.tenant_id, w.binding, resume});
  std::vector<std::string> records;
  records.reserve(page.entries.size());
  for (auto& entry : page.entries) records.push_back(std::move(entry.second));
  auto render = [done, collection, next](std::optional<std::vector<std::string>> items) {
    if (!items) return done(backend_unavailable("rights resolver"));
    std::string body = "{" + domain::json_string(collection) + ":[";
    for (std::size_t i = 0; i < items->size(); ++i) body += (i ? "," : "") + (*items)[i];
    body += "]";
    if (!next.empty()) body += ",\"next_page_token\":" + domain::json_string(next);
    body += "}";
    auto r = json_reply(200, std::move(body));
    r.headers.emplace_back("Cache-Control", "private, max-age=1");
    done(std::move(r));
  };
  if (present) return present(std::move(records), render);
  render(std::move(records));
}

}  // namespace

void answer_query(const std::shared_ptr<const request_context>& ctx, const std::string& collection,
                  const std::vector<std::pair<std::string, std::string>>& filters, page_fetch fetch, reply_fn done,
                  item_presenter present) {
  auto window = window_of(*ctx, collection, filters);
  if (auto* refusal = std::get_if<domain::api_reply>(&window)) return done(std::move(*refusal));
  auto w = std::get<list_window>(std::move(window));
  // Tokens issued before lists were index-driven held a table key (tenant NUL id): the id goes on.
  if (auto nul = w.after.find('\0'); nul != std::string::npos) w.after = w.after.substr(nul + 1);
  fetch(w.after, w.page_size + 1, [ctx, done, w, collection, present](scan_result page) {
    answer_page(ctx, w, collection, std::move(page), present, done);
  });
}

void answer_catalog(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                    storage::catalog_kind kind, const std::string& id, domain::error_id missing, const std::string& what,
                    reply_fn done) {
  ask(
    self, *ctx, done, ctx->actors->get<reader_actor>(), "record reader",
    [done, id, missing, what](fetch_outcome& found) {
      if (!found.found) return done(not_found(missing, what, id));
      auto r = json_reply(200, std::move(found.json));
      r.headers.emplace_back("Cache-Control", "private, max-age=1");
      done(std::move(r));
    },
    fetch_atom_v, storage::record_ref{kind, ctx->who.tenant_id, id});
}

void with_rights(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                 const std::string& work_id, std::function<void(const domain::resolved_rights&)> k, reply_fn done) {
  if (ctx->actors->rights_cache) {
    auto epoch = ctx->actors->rights_epoch ? ctx->actors->rights_epoch->load() : 0;
    if (auto hit = ctx->actors->rights_cache->find(rights_cache_key(ctx->who.tenant_id, work_id, epoch), domain::now_seconds()))
      return k(**hit);
  }
  ask(self, *ctx, done, ctx->actors->get<rights_actor>(), "rights resolver",
      [k](const domain::resolved_rights& rights) { k(rights); }, resolve_atom_v, ctx->who.tenant_id, work_id);
}

void with_rights_of(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                    std::vector<std::string> work_ids, std::function<void(const std::vector<domain::resolved_rights>&)> k,
                    reply_fn done) {
  auto found = std::make_shared<std::vector<domain::resolved_rights>>(work_ids.size());
  std::vector<std::size_t> missing_at;
  std::vector<std::string> missing;
  auto epoch = ctx->actors->rights_epoch ? ctx->actors->rights_epoch->load() : 0;
  auto now = domain::now_seconds();
  for (std::size_t i = 0; i < work_ids.size(); ++i) {
    auto hit = ctx->actors->rights_cache
                 ? ctx->actors->rights_cache->find(rights_cache_key(ctx->who.tenant_id, work_ids[i], epoch), now)
                 : std::nullopt;
    if (hit) {
      (*found)[i] = **hit;
      continue;
    }
    missing_at.push_back(i);
    missing.push_back(work_ids[i]);
  }
  if (missing.empty()) return k(*found);
  ask(
    self, *ctx, done, ctx->actors->get<rights_actor>(), "rights resolver",
    [found, missing_at, k](std::vector<domain::resolved_rights>& resolved) {
      for (std::size_t j = 0; j < missing_at.size() && j < resolved.size(); ++j) (*found)[missing_at[j]] = std::move(resolved[j]);
      k(*found);
    },
    resolve_atom_v, ctx->who.tenant_id, std::move(missing));
}

std::variant<domain::content_use, domain::api_reply> request_use(const request_context& ctx) {
  auto parsed = domain::parse_content_use(ctx.request.usage_purpose ? std::optional<std::string_view>{*ctx.request.usage_purpose}
                                                                    : std::nullopt);
  if (auto* e = std::get_if<domain::api_error>(&parsed)) return domain::api_reply::from(std::move(*e));
  return std::get<domain::content_use>(parsed);
}

void with_content_use(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                      const std::string& work_id, std::function<void(const domain::resolved_rights&)> k, reply_fn done) {
  auto parsed = request_use(*ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return done(std::move(*refusal));
  with_rights(
    self, ctx, work_id,
    [k, done, use = std::get<domain::content_use>(parsed)](const domain::resolved_rights& rights) {
      if (auto refusal = domain::refuse_content(rights, use, true)) return done(domain::api_reply::from(std::move(*refusal)));
      k(rights);
    },
    done);
}

}  // namespace cl::actors

namespace cl::actors {

namespace {

domain::api_reply access_denied(const std::string& resource_id, domain::access_role needed, domain::access_role held) {
  auto shown = resource_id.size() > 64 ? resource_id.substr(0, 64) + "..." : resource_id;
  if (held == domain::access_role::none)
    return domain::api_reply::failure(domain::error_id::access_denied,
                                      "The caller holds no access grant on Resource " + shown
                                        + " (directly or through a group), or it does not exist.");
  return domain::api_reply::failure(
    domain::error_id::access_denied,
    "This needs the " + std::string{domain::role_name(needed)} + " role on Resource " + shown + "; the caller is "
      + std::string{domain::role_name(held)} + ".",
    {{"role", "needs " + std::string{domain::role_name(needed)}}});
}

}  // namespace

void with_role(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
               const std::string& resource_id, std::function<void(domain::access_role)> k, reply_fn done) {
  const auto& tenant = ctx->who.tenant_id;
  const auto& subject = ctx->who.subject;
  if (ctx->actors->access_cache) {
    auto epoch = ctx->actors->access_epoch ? ctx->actors->access_epoch->load() : 0;
    if (auto hit = ctx->actors->access_cache->find(access_cache_key(tenant, resource_id, subject, epoch), domain::now_seconds()))
      return k(*hit);
  }
  ask(self, *ctx, done, ctx->actors->get<access_actor>(), "access",
      [k = std::move(k)](std::int32_t held) { k(static_cast<domain::access_role>(held)); }, check_atom_v, tenant, subject,
      resource_id);
}

void with_access(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                 const std::string& resource_id, domain::access_role needed, std::function<void(domain::access_role)> k,
                 reply_fn done) {
  with_role(
    self, ctx, resource_id,
    [k = std::move(k), done, resource_id, needed](domain::access_role held) {
      if (held >= needed) return k(held);
      done(access_denied(resource_id, needed, held));
    },
    done);
}

void with_principals(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                     std::function<void(std::vector<std::string>)> k, reply_fn done) {
  ask(self, *ctx, done, ctx->actors->get<access_actor>(), "access",
      [k](std::vector<std::string>& principals) { k(std::move(principals)); }, principals_atom_v, ctx->who.tenant_id,
      ctx->who.subject);
}

std::optional<resource_write_context> begin_resource_write(const request_context& ctx, const reply_fn& done) {
  auto purpose = request_use(ctx);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) {
    done(std::move(*refusal));
    return std::nullopt;
  }
  return resource_write_context{ctx.who, std::make_shared<write_outcome>(), std::get<domain::content_use>(purpose),
                                write_policy(ctx)};
}

}  // namespace cl::actors
