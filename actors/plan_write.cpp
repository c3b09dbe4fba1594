#include "actors/plan_write.hpp"
#include "actors/plan_access.hpp"
#include "domain/clock.hpp"

#include "actors/rights.hpp"
#include "domain/resource.hpp"
#include "domain/ids.hpp"
#include "domain/layer3.hpp"
#include "domain/change_cursor.hpp"
#include "domain/sign_in.hpp"
#include "domain/records.hpp"
#include "storage/record_store.hpp"

#include <algorithm>

namespace cl::actors {

std::string record_activity(storage::write_txn& tx, const domain::principal& who, const std::string& type,
                            const std::string& kind, const std::string& id, const std::vector<std::string>& extra_agents,
                            const std::vector<std::string>& tooling, const std::string& at) {
  auto agent = domain::derived_agent(who);
  tx.catalog().put_if_absent(storage::catalog_kind::agent, who.tenant_id, agent.id, domain::agent_record_json(agent, who, at));
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
                const std::string& id, change_detail detail) {
  storage::change_entry e;
  e.tenant = tenant;
  e.kind = kind;
  e.id = id;
  e.op = op;
  e.at_ms = domain::now_ms();
  e.version = std::move(detail.version);
  e.hash = std::move(detail.hash);
  e.principal = std::move(detail.principal);
  tx.log_change(e);
}

namespace {

/// `m`, run so that its answer is stored in the ledger under `guard` in the same transaction. A
/// record that is there already (a concurrent request with the key committed first) is answered
/// from (`*replay`) and nothing is written.
storage::mutation guarded(storage::mutation m, std::shared_ptr<write_outcome> outcome,
                          std::shared_ptr<const idempotency_guard> guard,
                          std::shared_ptr<std::optional<domain::api_reply>> replay,
                          std::shared_ptr<std::uint64_t> replay_at) {
  return [m = std::move(m), outcome, guard, replay, replay_at](storage::write_txn& tx) {
    replay->reset();
    guard->settled->store(unsettled);
    auto now = domain::now_ms();
    auto found = domain::look_up(tx.ledger().record(guard->ledger_key), guard->fingerprint,
                                 guard->retention_ms, now);
    if (found.kind != domain::ledger_lookup::fresh) {
      bool same = found.kind == domain::ledger_lookup::replay;
      *replay = same ? domain::replay_of(found.answer) : domain::key_mismatch_reply();
      // The transaction sees the record, so its write is at or before the log's head.
      if (same) *replay_at = tx.last_logged();
      guard->settled->store(same ? replayed : mismatched);
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
    guard->settled->store(stored);
    return true;
  };
}


}  // namespace

domain::api_reply with_position(const request_context& ctx, domain::api_reply r, std::uint64_t at_least) {
  auto read = ctx.request.method == "GET" || ctx.request.method == "HEAD";
  if (ctx.actors->records && ctx.feed_cursors && !read && !r.error && r.status / 100 == 2)
    r.headers.emplace_back("Content-Lake-Position",
                           ctx.feed_cursors->seal({ctx.who.tenant_id, domain::feed_binding_any(),
                                                   std::max(at_least, ctx.actors->records->known_change())}));
  return r;
}

void write_then(const plan_run& run, storage::mutation m, std::shared_ptr<write_outcome> outcome,
                const std::string& what, std::function<void()> after_commit) {
  // A mutation may run more than once (record_store.hpp): only its last run's outcome counts.
  storage::mutation fresh = [m = std::move(m), outcome](storage::write_txn& tx) {
    outcome->refusal.reset();
    outcome->reply.reset();
    outcome->store_refusal = true;
    try {
      return m(tx);
    } catch (const storage::value_unstorable&) {
      return outcome->refuse_unstored(*unstorable_reply().error);
    }
  };
  auto replay = std::make_shared<std::optional<domain::api_reply>>();
  auto replay_at = std::make_shared<std::uint64_t>(0);
  if (run->idempotency) fresh = guarded(std::move(fresh), outcome, run->idempotency, replay, replay_at);
  ask(
    run, run->actors->get<writer_actor>(), "writer",
    [run, outcome, replay, replay_at, what, after_commit](bool stored) {
      if (*replay) return run.answer(with_position(*run, std::move(**replay), *replay_at));
      if (stored && outcome->reply) {
        if (after_commit) after_commit();
        return run.answer(with_position(*run, std::move(*outcome->reply)));
      }
      if (outcome->refusal) return run.answer(domain::api_reply::from(std::move(*outcome->refusal)));
      run.answer(domain::api_reply::failure(domain::error_id::internal, what + " could not be stored."));
    },
    write_atom_v, std::move(fresh));
}

void write_with_access(const plan_run& run, const std::string& resource_id, domain::access_role needed,
                       storage::mutation m, std::shared_ptr<write_outcome> outcome, const std::string& what,
                       std::function<void()> after_commit) {
  with_access(
    run, resource_id, needed,
    [run, outcome, what, m = std::move(m), after_commit = std::move(after_commit)](domain::access_role) mutable {
      write_then(run, std::move(m), outcome, what, std::move(after_commit));
    });
}

domain::api_reply resource_answer(const storage::write_txn& tx, const domain::platform_policy& policy,
                                  const std::string& tenant, int status, const std::string& record,
                                  const domain::content_use& use, std::string* hash_out) {
  auto work = storage::fields_of(record).work_id;
  auto now = domain::now_ms() / 1000;
  auto rights = resolve_work(work, work.empty() ? std::vector<std::string>{} : tx.contracts().for_work(tenant, work),
                             policy, now);
  auto hash = domain::resource_hash(record, rights.digest_input);
  if (hash_out) *hash_out = hash;
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

std::optional<resource_write_context> begin_resource_write(const plan_run& run) {
  auto purpose = request_use(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) {
    run.answer(std::move(*refusal));
    return std::nullopt;
  }
  return resource_write_context{run->who, std::make_shared<write_outcome>(), std::get<domain::content_use>(purpose),
                                write_policy(*run)};
}

}  // namespace cl::actors
