#pragma once
/// The write path of route plans: a mutation sent to the writer (guarded by the idempotency
/// ledger when the request has a key), its outcome, the Activity and change-log entry it records,
/// and the answer of a Resource write.

#include "actors/plan_support.hpp"
#include "domain/rights.hpp"
#include "storage/stores.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::actors {

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

/// `r` with the change-log position its write committed at (or later): a read that sends it back is
/// answered from state at or past it, on any node. Only on a 2xx answer to a write, replayed or not;
/// not on a GET that writes on the side (the parts of an upload): the caller asked to read.
/// `at_least`: a position the answer must cover (a replay's, read where its record was found).
domain::api_reply with_position(const request_context& ctx, domain::api_reply r, std::uint64_t at_least = 0);

/// Sends `m` to the writer; after the durable commit answers `outcome->reply` (calling
/// `after_commit` first, e.g. to bump a cache epoch), or `outcome->refusal`, or 500 INTERNAL
/// ("<what> could not be stored") when the mutation refused without saying why; a writer that is
/// gone or failed answers 503. With `run->idempotency`, the mutation is guarded: the answer
/// (success, or a refusal made after execution began) is stored in the ledger in the same
/// transaction, and a record that appeared meanwhile is replayed instead of writing again.
void write_then(const plan_run& run, storage::mutation m, std::shared_ptr<write_outcome> outcome,
                const std::string& what, std::function<void()> after_commit = {});

/// A write on Resource `resource_id` that needs the role `needed` (layer 2): `write_then` once the
/// caller holds it, 403 ACCESS_DENIED otherwise (nothing is sent to the writer).
void write_with_access(const plan_run& run, const std::string& resource_id, domain::access_role needed,
                       storage::mutation m, std::shared_ptr<write_outcome> outcome, const std::string& what,
                       std::function<void()> after_commit = {});

/// The answer of a Resource write: `record` with rights resolved inside `tx` (its contracts as the
/// transaction sees them) under `policy`, its `hash` as `ETag`, `Cache-Control: no-store`; without
/// its content when those rights do not allow the request's `use` (layer 3: a PATCH of the title
/// must not hand out content its caller may not read).
domain::api_reply resource_answer(const storage::write_txn& tx, const domain::platform_policy& policy,
                                  const std::string& tenant, int status, const std::string& record,
                                  const domain::content_use& use, std::string* hash = nullptr);

/// The policy a write resolves rights with (the resolver's, published in `run->actors`).
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

/// The context of a Resource write; nullopt when the declared use is refused (`run` answered).
std::optional<resource_write_context> begin_resource_write(const plan_run& run);

/// What a change-log entry says beyond what changed: the record's version and `hash` after it, the
/// grantee of a grant change (what the change feed's events name).
struct change_detail {
  std::string version;
  std::string hash;
  std::string principal;
};

/// Appends a change-log entry: `op` happened to `kind`/`id` of `tenant`, now.
void log_change(storage::write_txn& tx, const std::string& tenant, storage::change_op op, storage::change_kind kind,
                const std::string& id, change_detail detail = {});

}  // namespace cl::actors
