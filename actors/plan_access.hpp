#pragma once
/// Layers 2 and 3 for route plans: the caller's role on a Resource and the principals whose grants
/// count (the access actor, through its shared cache), the rights of Works (the rights resolver,
/// through its shared cache) and the use a request declares.

#include "actors/plan_support.hpp"
#include "domain/access.hpp"
#include "domain/rights.hpp"

#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace cl::actors {

/// The use of content the request declares (`X-Usage-Purpose`; none: a plain read), or the 400
/// that refuses a malformed header.
std::variant<domain::content_use, domain::api_reply> request_use(const request_context& ctx);

/// Calls `k` with the rights of `work_id` (empty: a staged Resource) in the caller's tenant:
/// from the shared rights cache when it holds them, else from the rights resolver. A resolver
/// that fails or is gone answers 503 through `run` instead.
void with_rights(const plan_run& run, const std::string& work_id,
                 std::function<void(const domain::resolved_rights&)> k);

/// Calls `k` with the rights of each of `work_ids` (empty: staged) in the caller's tenant, in
/// order: from the shared rights cache where it holds them, the rest in one ask of the resolver.
void with_rights_of(const plan_run& run, std::vector<std::string> work_ids,
                    std::function<void(const std::vector<domain::resolved_rights>&)> k);

/// The headers every content read of Resource `resource_id` (and its refusal by layer 3) carries:
/// its rights as `Content-Usage`, `tdm-reservation` and `tdm-policy` (domain/odrl.hpp).
void travel_headers(domain::api_reply& r, const domain::resolved_rights& rights, std::string_view resource_id);

/// Layer 3 for a read of content of Resource `resource_id` of `work_id`: resolves its rights and
/// calls `k` when the request's use (a plain read, or `X-Usage-Purpose`) is allowed; otherwise
/// answers 403 USAGE_PROHIBITED with `travel_headers` (or 400 for a malformed purpose) through `run`.
void with_content_use(const plan_run& run, const std::string& resource_id, const std::string& work_id,
                      std::function<void(const domain::resolved_rights&)> k);

/// Calls `k` with the caller's role on Resource `resource_id` of its tenant (`none` without a
/// grant, or for an id that names nothing): from the shared access cache, else the access actor.
void with_role(const plan_run& run, const std::string& resource_id, std::function<void(domain::access_role)> k);

/// Layer 2: calls `k` with the caller's role on Resource `resource_id` of its tenant when that
/// role is at least `needed` (from the shared access cache, else the access actor); otherwise
/// answers 403 ACCESS_DENIED through `run` — also for an id that names no Resource (permission
/// before existence, docs/api.md "403 or 404").
void with_access(const plan_run& run, const std::string& resource_id, domain::access_role needed,
                 std::function<void(domain::access_role)> k);

/// Calls `k` with the principals whose grants count for the caller (its subject, then its
/// groups); list queries filter by them in the store. 503 through `run` when the access actor fails.
void with_principals(const plan_run& run, std::function<void(std::vector<std::string>)> k);

}  // namespace cl::actors
