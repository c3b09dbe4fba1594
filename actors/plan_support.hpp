#pragma once
/// Helpers shared by route plans: JSON bodies, query parameters, replies, activities, misses.
/// Included by plan sources only (it brings Boost.JSON).

#include "actors/backend_error.hpp"
#include "actors/coordinator.hpp"
#include "domain/exchange.hpp"
#include "storage/record_store.hpp"

#include <boost/json/object.hpp>
#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::actors {

/// A successful JSON answer.
domain::api_reply json_reply(int status, std::string body);

/// The request body as a JSON object, or the reply that refuses it: 415 UNSUPPORTED_MEDIA_TYPE
/// for another Content-Type, 400 INVALID_ARGUMENT for anything but a JSON object.
std::variant<boost::json::object, domain::api_reply> json_body(const domain::api_request& request);

/// 400 INVALID_ARGUMENT naming each member of `body` that is not in `allowed`; nullopt if none.
std::optional<domain::api_reply> unknown_members(const boost::json::object& body,
                                                 std::initializer_list<std::string_view> allowed);

/// 400 INVALID_ARGUMENT: "The request is not valid: <field> <why>.", with a detail naming `field`.
domain::api_reply invalid_field(const std::string& field, const std::string& why);

/// The decoded value of query parameter `name` (`+` as space, %XX decoded); empty when absent.
std::string query_param(std::string_view query, std::string_view name);

/// Stamps the caller's derived agent (registering it on first use) and records an Activity of
/// `type` on `kind`/`id` in `tx`. Returns the activity id.
std::string record_activity(storage::write_txn& tx, const domain::principal& who, const std::string& type,
                            const std::string& kind, const std::string& id, const std::vector<std::string>& extra_agents,
                            const std::vector<std::string>& tooling, const std::string& at);

/// What a write's mutation decided, inside its transaction: the answer when it kept its changes,
/// or why it refused. Answers are made in the transaction so that an idempotency record holds
/// exactly what the client gets, committed with the write.
struct write_outcome {
  std::optional<domain::api_error> refusal;
  std::optional<domain::api_reply> reply;
  /// False for a refusal about the caller rather than the request (a stale sign-in): nothing is
  /// stored under its Idempotency-Key, so the same request succeeds after signing in again.
  bool store_refusal = true;

  /// Refuses with `e`, not stored under the key; returns false (what a refusing mutation returns).
  bool refuse_unstored(domain::api_error e) {
    refusal = std::move(e);
    store_refusal = false;
    return false;
  }
};

/// Spec 5.4 for this request's caller and `operation` (a sensitive human-only operation):
/// nullopt when it may go ahead, else the 403 HUMAN_REQUIRED or 401 AUTH_STALE.
std::optional<domain::api_error> sensitive_refusal(const request_context& ctx, std::string_view operation);

/// Sends `m` to the writer; after the durable commit answers `outcome->reply` (calling
/// `after_commit` first, e.g. to bump a cache epoch), or `outcome->refusal`, or 500 INTERNAL
/// ("<what> could not be stored") when the mutation refused without saying why; a writer that is
/// gone or failed answers 503. With `ctx->idempotency`, the mutation is guarded: the answer
/// (success, or a refusal made after execution began) is stored in the ledger in the same
/// transaction, and a record that appeared meanwhile is replayed instead of writing again.
void write_then(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx, storage::mutation m,
                std::shared_ptr<write_outcome> outcome, const std::string& what, reply_fn done,
                std::function<void()> after_commit = {});

/// A write on Resource `resource_id` that needs the role `needed` (layer 2): `write_then` once the
/// caller holds it, 403 ACCESS_DENIED otherwise (nothing is sent to the writer).
void write_with_access(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                       const std::string& resource_id, domain::access_role needed, storage::mutation m,
                       std::shared_ptr<write_outcome> outcome, const std::string& what, reply_fn done,
                       std::function<void()> after_commit = {});

/// The answer of a Resource write: `record` with rights resolved inside `tx` (its contracts as the
/// transaction sees them) under `policy`, its `hash` as `ETag`, `Cache-Control: no-store`; without
/// its content when those rights do not allow the request's `use` (layer 3: a PATCH of the title
/// must not hand out content its caller may not read).
domain::api_reply resource_answer(const storage::write_txn& tx, const domain::platform_policy& policy,
                                  const std::string& tenant, int status, const std::string& record,
                                  const domain::content_use& use);

/// The use of content the request declares (`X-Usage-Purpose`; none: a plain read), or the 400
/// that refuses a malformed header.
std::variant<domain::content_use, domain::api_reply> request_use(const request_context& ctx);

/// The policy a write resolves rights with (the resolver's, published in `ctx->actors`).
std::shared_ptr<const domain::platform_policy> write_policy(const request_context& ctx);

/// What a Resource write needs before it runs: the caller, the outcome its mutation fills, the
/// declared use (its answer withholds content the rights refuse for it) and the policy the
/// answer's rights resolve under.
struct resource_write_context {
  domain::principal who;
  std::shared_ptr<write_outcome> outcome;
  domain::content_use use;
  std::shared_ptr<const domain::platform_policy> policy;
};

/// The context of a Resource write; nullopt when the declared use is refused (`done` answered).
std::optional<resource_write_context> begin_resource_write(const request_context& ctx, const reply_fn& done);

/// Appends a change-log entry: `op` happened to `kind`/`id` of `tenant`, now.
void log_change(storage::write_txn& tx, const std::string& tenant, storage::change_op op, storage::change_kind kind,
                const std::string& id);

/// The answer for an id the caller's tenant does not hold: `missing` (404), worded the same
/// whether the id exists in another tenant or nowhere, so no answer confirms another tenant's id.
domain::api_reply not_found(domain::error_id missing, const std::string& what, const std::string& id);

/// Turns stored records into the items a list shows (e.g. adds rights); calls `k` with the items,
/// or with nullopt when a collaborator failed (503). Runs in the coordinator.
using item_presenter =
  std::function<void(std::vector<std::string> records, std::function<void(std::optional<std::vector<std::string>>)> k)>;

/// Fetches up to `limit` list items after `after` through a typed query and calls `k` with the
/// page; answers 503 through the plan's `done` itself when the asked actor fails.
using page_fetch =
  std::function<void(const std::string& after, std::size_t limit, std::function<void(scan_result)> k)>;

/// Answers a list route whose pages come from a typed query (`fetch`): `page_size` and
/// `page_token` (bound to the tenant, `collection` and `filters`), as
/// `{"<collection>":[...],"next_page_token":"..."}`; the token is absent on the last page. A page
/// may hold fewer items than asked when filtering examined its budget.
void answer_query(const std::shared_ptr<const request_context>& ctx, const std::string& collection,
                  const std::vector<std::pair<std::string, std::string>>& filters, page_fetch fetch, reply_fn done,
                  item_presenter present = nullptr);

/// The one way a plan asks a concern actor: with the request's timeout (its deadline is watched
/// as a whole), `on_value` getting the answer; an actor that is absent (restarting), fails or is
/// late answers 503 BACKEND_UNAVAILABLE naming `concern` through `done` instead.
template <class Handle, class OnValue, class... Args>
void ask(caf::event_based_actor* self, const request_context& ctx, const reply_fn& done, const Handle& actor,
         const char* concern, OnValue on_value, Args&&... args) {
  if (!actor) return done(backend_unavailable(concern));
  self->request(actor, ctx.timeout, std::forward<Args>(args)...)
    .then(std::move(on_value), [done, concern, stats = ctx.actors->stats](caf::error& e) {
      // The client learns "unavailable"; the operator learns which kind of failure, and where.
      auto kind = backend_error_name(classify(e));
      if (stats) stats->count_backend_error(concern, kind);
      spdlog::warn("{} did not answer a request: {}", concern, kind);
      done(backend_unavailable(concern));
    });
}

/// Pages of typed query `q` (its `after` and `limit` set per page) asked of `actor` (the reader,
/// or the contracts actor); a failure answers 503 naming `concern`.
template <class Handle, class Query>
page_fetch query_pages(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx, reply_fn done,
                       Handle actor, const char* concern, Query q) {
  return [self, ctx, done, actor, concern, q](const std::string& after, std::size_t limit,
                                              std::function<void(scan_result)> k) mutable {
    q.after = after;
    q.limit = limit;
    ask(self, *ctx, done, actor, concern, [k](scan_result& page) { k(std::move(page)); }, list_atom_v, q);
  };
}

/// Calls `k` with the rights of `work_id` (empty: a staged Resource) in the caller's tenant:
/// from the shared rights cache when it holds them, else from the rights resolver. A resolver
/// that fails or is gone answers 503 through `done` instead.
void with_rights(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                 const std::string& work_id, std::function<void(const domain::resolved_rights&)> k, reply_fn done);

/// Calls `k` with the rights of each of `work_ids` (empty: staged) in the caller's tenant, in
/// order: from the shared rights cache where it holds them, the rest in one ask of the resolver.
void with_rights_of(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                    std::vector<std::string> work_ids, std::function<void(const std::vector<domain::resolved_rights>&)> k,
                    reply_fn done);

/// Layer 3 for a read of content of a Resource of `work_id`: resolves its rights and calls `k`
/// when the request's use (a plain read, or `X-Usage-Purpose`) is allowed; otherwise answers
/// 403 USAGE_PROHIBITED (or 400 for a malformed purpose) through `done`.
void with_content_use(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                      const std::string& work_id, std::function<void(const domain::resolved_rights&)> k, reply_fn done);

/// Calls `k` with the caller's role on Resource `resource_id` of its tenant (`none` without a
/// grant, or for an id that names nothing): from the shared access cache, else the access actor.
void with_role(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
               const std::string& resource_id, std::function<void(domain::access_role)> k, reply_fn done);

/// Layer 2: calls `k` with the caller's role on Resource `resource_id` of its tenant when that
/// role is at least `needed` (from the shared access cache, else the access actor); otherwise
/// answers 403 ACCESS_DENIED through `done` — also for an id that names no Resource (permission
/// before existence, docs/api.md "403 or 404").
void with_access(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                 const std::string& resource_id, domain::access_role needed, std::function<void(domain::access_role)> k,
                 reply_fn done);

/// Calls `k` with the principals whose grants count for the caller (its subject, then its
/// groups); list queries filter by them in the store. 503 through `done` when the access actor fails.
void with_principals(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                     std::function<void(std::vector<std::string>)> k, reply_fn done);

/// Answers the catalogue record `id` (a Work, a Source) of the caller's tenant (200,
/// `Cache-Control: private, max-age=1`), or `missing` (404, also for another tenant's id).
void answer_catalog(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                    storage::catalog_kind kind, const std::string& id, domain::error_id missing, const std::string& what,
                    reply_fn done);

}  // namespace cl::actors
