#include "actors/plan_access.hpp"

#include "domain/clock.hpp"

#include "actors/access.hpp"
#include "domain/layer3.hpp"
#include "domain/odrl.hpp"

namespace cl::actors {

void with_rights(const plan_run& run, const std::string& work_id,
                 std::function<void(const domain::resolved_rights&)> k) {
  // One Work found in the cache: its resolution as the cache holds it, not a copy.
  if (run->actors->rights_cache && run->actors->caches_current()) {
    auto epoch = run->actors->rights_epoch ? run->actors->rights_epoch->load() : 0;
    if (auto hit = run->actors->rights_cache->find(rights_cache_key(run->who.tenant_id, work_id, epoch),
                                                   domain::now_seconds()))
      return k(**hit);
  }
  with_rights_of(run, {work_id},
                 [k = std::move(k)](const std::vector<domain::resolved_rights>& rights) { k(rights.front()); });
}

void with_rights_of(const plan_run& run, std::vector<std::string> work_ids,
                    std::function<void(const std::vector<domain::resolved_rights>&)> k) {
  auto found = std::make_shared<std::vector<domain::resolved_rights>>(work_ids.size());
  std::vector<std::size_t> missing_at;
  std::vector<std::string> missing;
  auto epoch = run->actors->rights_epoch ? run->actors->rights_epoch->load() : 0;
  auto now = domain::now_seconds();
  bool cached = run->actors->rights_cache && run->actors->caches_current();
  for (std::size_t i = 0; i < work_ids.size(); ++i) {
    auto hit = cached ? run->actors->rights_cache->find(rights_cache_key(run->who.tenant_id, work_ids[i], epoch), now)
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
    run, run->actors->get<rights_actor>(), "rights resolver",
    [found, missing_at, k](std::vector<domain::resolved_rights>& resolved) {
      for (std::size_t j = 0; j < missing_at.size() && j < resolved.size(); ++j)
        (*found)[missing_at[j]] = std::move(resolved[j]);
      k(*found);
    },
    resolve_atom_v, run->who.tenant_id, std::move(missing));
}

std::variant<domain::content_use, domain::api_reply> request_use(const request_context& ctx) {
  auto parsed = domain::parse_content_use(ctx.request.usage_purpose ? std::optional<std::string_view>{*ctx.request.usage_purpose}
                                                                    : std::nullopt);
  if (auto* e = std::get_if<domain::api_error>(&parsed)) return domain::api_reply::from(std::move(*e));
  return std::get<domain::content_use>(parsed);
}

void travel_headers(domain::api_reply& r, const domain::resolved_rights& rights, std::string_view resource_id) {
  for (auto& h : domain::rights_headers(rights, domain::odrl_policy_path(resource_id))) r.headers.push_back(std::move(h));
}

void with_content_use(const plan_run& run, const std::string& resource_id, const std::string& work_id,
                      std::function<void(const domain::resolved_rights&)> k) {
  auto parsed = request_use(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  with_rights(
    run, work_id,
    [run, k, resource_id, use = std::get<domain::content_use>(parsed)](const domain::resolved_rights& rights) {
      if (auto refusal = domain::refuse_content(rights, use, true)) {
        auto r = domain::api_reply::from(std::move(*refusal));
        travel_headers(r, rights, resource_id);
        return run.answer(std::move(r));
      }
      k(rights);
    });
}

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

void with_role(const plan_run& run, const std::string& resource_id, std::function<void(domain::access_role)> k) {
  const auto& tenant = run->who.tenant_id;
  const auto& subject = run->who.subject;
  if (run->actors->access_cache && run->actors->caches_current()) {
    auto epoch = run->actors->access_epoch ? run->actors->access_epoch->load() : 0;
    if (auto hit
        = run->actors->access_cache->find(access_cache_key(tenant, resource_id, subject, epoch), domain::now_seconds()))
      return k(*hit);
  }
  ask(
    run, run->actors->get<access_actor>(), "access",
    [k = std::move(k)](std::int32_t held) { k(static_cast<domain::access_role>(held)); }, check_atom_v, tenant, subject,
    resource_id);
}

void with_access(const plan_run& run, const std::string& resource_id, domain::access_role needed,
                 std::function<void(domain::access_role)> k) {
  with_role(run, resource_id, [run, k = std::move(k), resource_id, needed](domain::access_role held) {
    if (held >= needed) return k(held);
    run.answer(access_denied(resource_id, needed, held));
  });
}

void with_principals(const plan_run& run, std::function<void(std::vector<std::string>)> k) {
  ask(
    run, run->actors->get<access_actor>(), "access",
    [k](std::vector<std::string>& principals) { k(std::move(principals)); }, principals_atom_v, run->who.tenant_id,
    run->who.subject);
}

}  // namespace cl::actors
