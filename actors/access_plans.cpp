// Access grants (layer 2): GET /resources/{id}/access, GET/PUT/DELETE /resources/{id}/access/{principal}.

#include "actors/access.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_paging.hpp"
#include "actors/plan_write.hpp"
#include "actors/plan_support.hpp"
#include "actors/plans.hpp"
#include "domain/access.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

namespace cl::actors {

namespace json = boost::json;

namespace {

/// Stored grants changed: roles cached before are never found again.
void bump_access_epoch(const request_context& ctx) {
  if (ctx.actors->access_epoch) ++*ctx.actors->access_epoch;
}

/// 400 for a path principal that no grant could name.
std::optional<domain::api_reply> malformed_principal(const std::string& principal) {
  if (domain::is_grantee(principal)) return std::nullopt;
  return domain::api_reply::failure(domain::error_id::invalid_argument,
                                    "A grant names a u_ user, an a_ application or a g_ group.",
                                    {{"principal", "u_, a_ or g_ followed by 1 to 128 of [A-Za-z0-9_-]"}});
}

}  // namespace

void plan_list_grants(const plan_run& run) {
  auto id = run->param("id");
  with_access(run, id, domain::access_role::owner, [run, id](domain::access_role) {
    storage::grant_query q{run->who.tenant_id, id, {}, 0};
    answer_query(run, "grants", {{"resource_id", id}},
                 query_pages(run, run->actors->get<reader_actor>(), "record reader", q));
  });
}

void plan_get_grant(const plan_run& run) {
  auto id = run->param("id");
  auto principal = run->param("principal");
  if (auto refusal = malformed_principal(principal)) return run.answer(std::move(*refusal));
  // Owners read every grant; any grantee reads its own (to learn its role).
  auto needed = principal == run->who.subject ? domain::access_role::reader : domain::access_role::owner;
  with_access(run, id, needed, [run, id, principal](domain::access_role) {
    ask(
      run, run->actors->get<reader_actor>(), "record reader",
      [run, principal](fetch_outcome& found) {
        if (!found.found)
          return run.answer(domain::api_reply::failure(domain::error_id::grant_not_found,
                                                       "The Resource has no grant for " + principal + "."));
        auto r = json_reply(200, std::move(found.json));
        r.headers.emplace_back("Cache-Control", "private, no-cache");
        run.answer(std::move(r));
      },
      fetch_atom_v, storage::grant_ref{run->who.tenant_id, id, principal});
  });
}

void plan_put_grant(const plan_run& run) {
  auto id = run->param("id");
  auto principal = run->param("principal");
  if (auto refusal = malformed_principal(principal)) return run.answer(std::move(*refusal));
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto& body = std::get<json::object>(parsed);
  if (auto refusal = unknown_members(body, {"role"})) return run.answer(std::move(*refusal));
  auto* role_value = body.if_contains("role");
  auto role = role_value && role_value->is_string() ? domain::parse_role(role_value->as_string()) : std::nullopt;
  if (!role)
    return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument, "Name the role to grant.",
                                                 {{"/role", "one of reader, writer, owner"}}));
  auto who = run->who;
  auto outcome = std::make_shared<write_outcome>();
  // Granting or taking away the owner role is a sensitive human-only operation (spec 5.4).
  auto granting_owner = *role == domain::access_role::owner;
  auto revoking_owner = sensitive_refusal(*run, "take the owner role away");
  storage::mutation grant = [who, id, principal, role = *role, outcome, revoking_owner](storage::write_txn& tx) {
    auto refuse = [&](domain::api_error e) {
      outcome->refusal = std::move(e);
      return false;
    };
    if (!tx.resources().get(who.tenant_id, id))
      return refuse({domain::error_id::access_denied, "The Resource does not exist.", {}});
    auto existing = tx.grants().grant(who.tenant_id, id, principal);
    auto before = existing ? domain::parse_grant(*existing) : std::nullopt;
    bool demotes_owner = before && before->role == domain::access_role::owner && role != domain::access_role::owner;
    if (demotes_owner && revoking_owner) return outcome->refuse_unstored(*revoking_owner);
    if (demotes_owner && !tx.grants().another_owner(who.tenant_id, id, principal))
      return refuse({domain::error_id::last_owner, "The Resource would be left without an owner.",
                     {{"/role", principal + " is its only owner"}}});
    domain::access_grant g{id, principal, role, who.subject, domain::iso8601_now()};
    auto record = domain::grant_json(g);
    tx.grants().put(who.tenant_id, g);
    log_change(tx, who.tenant_id, storage::change_op::granted, storage::change_kind::resource, id, {{}, {}, principal});
    outcome->reply = json_reply(existing ? 200 : 201, record);
    if (!existing) outcome->reply->headers.emplace_back("Location", "/v0/content-lake/resources/" + id + "/access/" + principal);
    outcome->reply->headers.emplace_back("Cache-Control", "no-store");
    return true;
  };
  auto write = [run, outcome, grant = std::move(grant)]() mutable {
    write_then(run, std::move(grant), outcome, "The grant", [run] { bump_access_epoch(*run); });
  };
  with_access(
    run, id, domain::access_role::owner,
    [run, principal, granting_owner, write = std::move(write)](domain::access_role) mutable {
      if (granting_owner)
        if (auto refusal = sensitive_refusal(*run, "grant the owner role"))
          return run.answer(domain::api_reply::from(std::move(*refusal)));
      if (principal.rfind("g_", 0) != 0) return write();
      // A group must be in the directory: a grant to a misspelt group would silently grant nothing.
      ask(
        run, run->actors->get<access_actor>(), "access",
        [run, principal, write](bool known) mutable {
          if (!known)
            return run.answer(domain::api_reply::failure(
              domain::error_id::invalid_argument, "The group directory has no group " + principal + " in this tenant.",
              {{"principal", "no such group"}}));
          write();
        },
        group_atom_v, run->who.tenant_id, principal);
    });
}

void plan_delete_grant(const plan_run& run) {
  auto id = run->param("id");
  auto principal = run->param("principal");
  if (auto refusal = malformed_principal(principal)) return run.answer(std::move(*refusal));
  auto who = run->who;
  auto outcome = std::make_shared<write_outcome>();
  auto revoking_owner = sensitive_refusal(*run, "take the owner role away");
  storage::mutation revoke = [who, id, principal, outcome, revoking_owner](storage::write_txn& tx) {
    auto refuse = [&](domain::api_error e) {
      outcome->refusal = std::move(e);
      return false;
    };
    auto existing = tx.grants().grant(who.tenant_id, id, principal);
    if (!existing)
      return refuse({domain::error_id::grant_not_found, "The Resource has no grant for " + principal + ".", {}});
    auto g = domain::parse_grant(*existing);
    if (g && g->role == domain::access_role::owner && revoking_owner) return outcome->refuse_unstored(*revoking_owner);
    if (g && g->role == domain::access_role::owner && !tx.grants().another_owner(who.tenant_id, id, principal))
      return refuse({domain::error_id::last_owner, "The Resource would be left without an owner.",
                     {{"principal", principal + " is its only owner"}}});
    tx.grants().erase(who.tenant_id, id, principal);
    log_change(tx, who.tenant_id, storage::change_op::revoked, storage::change_kind::resource, id, {{}, {}, principal});
    outcome->reply = domain::api_reply{};
    outcome->reply->status = 204;
    outcome->reply->content_type.clear();
    return true;
  };
  write_with_access(run, id, domain::access_role::owner, std::move(revoke), outcome, "The revocation",
                    [run] { bump_access_epoch(*run); });
}

}  // namespace cl::actors
