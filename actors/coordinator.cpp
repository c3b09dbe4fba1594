// The caches a hot read uses (docs/architecture.md, "Request path"): what keys each, what keeps it right after a change, its bound.
//
//   - *Rate table* (`actors/rate_limiter.hpp`, `rate_table`): a token bucket per `client_id`, 16
//     shards under a mutex each, decided in place by coordinators and by the rate limiter actor (a
//     header before its body). Not a cache: the limiter's state, kept outside the actor so a restart
//     keeps every quota. Full buckets are forgotten every 4,096 admissions of a shard; on several
//     nodes it is charged what the others admitted (`rate_sharing`).
//   - *Records read in place* (`record_store::resource_at_once`, `fetch_resource` in
//     `actors/resource_support.hpp`): LMDB and the memory store answer with a read transaction on
//     the coordinator's thread (what the reader actor did, without the message); PostgreSQL answers
//     only from its hot-record cache (below), a miss asks a reader, whose read fills it. No cache of
//     its own on LMDB, so nothing to invalidate.
//   - *Renderings* (`actors/representation_cache.hpp`): the JSON read (record, rights and hash
//     composed) and the Markdown read, keyed by (tenant, Resource, rendering, `?version`). An entry
//     keeps the record bytes and the rights (`digest_input` and JSON) it was made from and is found
//     only when the request's are byte for byte the same, so nothing invalidates it: a write, on this
//     node or another, or a contract change just misses, and the new rendering replaces the old one.
//     A hit costs a compare of the record instead of a SHA-256 over it and the composing. A field
//     mask applies to the kept JSON. Bounded in bytes (`http.representation_cache_mib`, 64), least
//     recently read out first, 16 shards; `contentlake_representation_cache_bytes`. The MCP tool
//     `read_resource` keeps its result (serialized, without the JSON-RPC id) in the same cache under
//     (tenant, Resource, `mcp-` format, field mask), found only when the REST answer it is shaped
//     from is byte for byte the same: that answer carries the record, the rights and the hash, so
//     the same rule holds.

#include "actors/coordinator.hpp"
#include "actors/backend_error.hpp"
#include "domain/clock.hpp"

#include "actors/deadlines.hpp"
#include "actors/ledger.hpp"
#include "actors/plan_write.hpp"
#include "actors/rate_limiter.hpp"
#include "domain/idempotency.hpp"
#include "domain/change_cursor.hpp"
#include "storage/record_store.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <optional>

namespace cl::actors {

namespace {

/// Guards the one answer of a request. If every holder is gone without answering (a plan bug,
/// an actor killed mid-request), the destructor answers 503 so no connection ever hangs; if the
/// request's deadline passes first, the deadline watch answers 503 and stops the coordinator.
class reply_once : public deadline_target {
public:
  reply_once(reply_fn fn, std::chrono::milliseconds bound) : fn_(std::move(fn)), bound_(bound) {}
  ~reply_once() override {
    if (!answered_.exchange(true)) fn_(backend_unavailable("coordinator", backend_error::other));
  }
  void operator()(domain::api_reply r) {
    if (!answered_.exchange(true)) fn_(std::move(r));
  }
  /// Settles the request without an answer through this guard (an admitted header: its answer
  /// comes from a second coordinator). False when it was answered already (the deadline passed).
  bool settle() { return !answered_.exchange(true); }
  /// The coordinator to stop when the deadline passes; set before the deadline is watched.
  void bind(caf::actor_addr coordinator) { coordinator_ = std::move(coordinator); }
  void expire() override {
    if (!answered_.exchange(true)) {
      auto r = domain::api_reply::failure(domain::error_id::backend_unavailable,
                                          "The request did not complete within " + std::to_string(bound_.count())
                                            + " ms; a backend service is slow or restarting. Retry shortly.");
      r.retry_after_seconds = 1;
      fn_(std::move(r));
    }
    if (auto a = caf::actor_cast<caf::actor>(coordinator_)) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

private:
  reply_fn fn_;
  std::chrono::milliseconds bound_;
  caf::actor_addr coordinator_;
  std::atomic<bool> answered_{false};
};

/// The token from `Authorization: Bearer <token>` (a view into `header`); empty when there is none.
std::string_view bearer_token(std::string_view header) {
  constexpr std::string_view scheme = "bearer ";
  if (header.size() <= scheme.size()) return {};
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(header[i])) != scheme[i]) return {};
  auto start = header.find_first_not_of(' ', scheme.size());
  if (start == std::string::npos) return {};
  auto end = header.find_last_not_of(" \t");
  return header.substr(start, end - start + 1);
}

domain::api_reply token_missing() {
  return domain::api_reply::failure(domain::error_id::token_missing, "The request carries no Authorization: Bearer token.");
}

/// `r` with the caller it answers (the access log and the metrics name them).
domain::api_reply attributed(domain::api_reply r, const domain::principal& who) {
  r.tenant = who.tenant_id;
  r.client_id = who.client_id;
  return r;
}

domain::api_reply rate_limited(const rate_decision& d) {
  auto r = domain::api_reply::failure(domain::error_id::rate_limited,
                                      "Too many requests for this client; retry after "
                                        + std::to_string(d.retry_after_seconds) + " s.");
  r.retry_after_seconds = d.retry_after_seconds;
  return r;
}

struct join_state {
  int pending = 2;
  std::optional<domain::api_reply> plan_reply;
  std::optional<rate_decision> rate;
  backend_error rate_failure = backend_error::gone;  ///< why `rate` is empty: no limiter, or its ask failed
};

void run_plan_at(caf::event_based_actor* self, const std::shared_ptr<request_job>& job,
                 const std::shared_ptr<request_context>& ctx, reply_fn reply);

/// Runs the route's plan; for a POST, PUT or PATCH with an Idempotency-Key, first asks the ledger
/// whether to replay, refuse (422, 409) or execute holding the key, released once answered.
void run_plan(caf::event_based_actor* self, const std::shared_ptr<request_job>& job,
              const std::shared_ptr<request_context>& ctx, reply_fn reply) {
  if (ctx->request.position.empty()) return run_plan_at(self, job, ctx, std::move(reply));
  // Read your writes: a request that sends a position runs only once this node's reads reflect it.
  // Sealed like a change-feed cursor (the log's sequence is global: a readable one would tell a
  // tenant how much the others write); another tenant's, or another deployment's, does not open.
  auto at = ctx->feed_cursors ? ctx->feed_cursors->open_position(ctx->request.position, ctx->who.tenant_id)
                              : std::nullopt;
  if (!at)
    return reply(domain::api_reply::failure(
      domain::error_id::position_invalid, "The Content-Lake-Position header is not a position this API answered with.",
      {{"Content-Lake-Position", "not a position"}}));
  ctx->at_least = *at;
  if (!ctx->actors->records || ctx->actors->records->reflects_now(*at))
    return run_plan_at(self, job, ctx, std::move(reply));
  // Not yet: the log gate catches up (a read of the log on PostgreSQL) on its own thread.
  auto run = plan_run{self, ctx, reply};
  ask(
    run, ctx->actors->get<log_gate_actor>(), "change log",
    [self, job, ctx, reply](bool reached) {
      if (reached) return run_plan_at(self, job, ctx, reply);
      auto r = domain::api_reply::failure(domain::error_id::position_not_reached,
                                          "No change at that position has been committed here.");
      r.retry_after_seconds = 1;
      reply(std::move(r));
    },
    reach_atom_v, *at);
}

/// `run_plan` once the request's position (if any) is reflected.
void run_plan_at(caf::event_based_actor* self, const std::shared_ptr<request_job>& job,
                 const std::shared_ptr<request_context>& ctx, reply_fn reply) {
  const auto& method = ctx->request.method;
  bool write = method == "POST" || method == "PUT" || method == "PATCH";
  if (!write || !ctx->request.has_idempotency_key) return job->plan(plan_run{self, ctx, std::move(reply)});
  if (auto problem = domain::idempotency_key_problem(ctx->request.idempotency_key))
    return reply(domain::api_reply::failure(domain::error_id::idempotency_key_invalid,
                                            "The Idempotency-Key header is not usable: " + *problem + ".",
                                            {{"Idempotency-Key", *problem}}));
  if (!ctx->actors->get<ledger_actor>()) return reply(backend_unavailable("idempotency ledger", backend_error::gone));
  auto key = domain::ledger_key{ctx->who.tenant_id, ctx->who.client_id, ctx->request.idempotency_key};
  auto fingerprint = domain::request_fingerprint(ctx->request, ctx->who.subject, ctx->who.scopes);
  auto ledger = ctx->actors->get<ledger_actor>();
  self->request(ledger, ctx->timeout, begin_atom_v, key, fingerprint, job->only_effect_is_write)
    .then(
      [self, job, ctx, reply, key, fingerprint, ledger](ledger_verdict& v) {
        switch (v.kind) {
          case ledger_verdict::replay:
            return reply(with_position(*ctx, domain::replay_of(v.answer), v.at));
          case ledger_verdict::mismatch:
            return reply(domain::key_mismatch_reply());
          case ledger_verdict::in_use: {
            auto r = domain::api_reply::failure(domain::error_id::idempotency_key_in_use,
                                                "A request with this Idempotency-Key is still executing; retry shortly.",
                                                {{"Idempotency-Key", "in use by a request in progress"}});
            r.retry_after_seconds = 1;
            return reply(std::move(r));
          }
          default:
            break;
        }
        auto guard = std::make_shared<const idempotency_guard>(
          idempotency_guard{key, fingerprint, job->idempotency_retention_ms});
        ctx->idempotency = guard;
        bool unchecked = v.kind == ledger_verdict::unchecked;
        job->plan(plan_run{self, ctx, [self, ctx, reply, ledger, guard, unchecked](domain::api_reply r) {
                             int settled = guard->settled->load();
                             if (!unchecked || settled != unsettled) {
                               caf::anon_send(ledger, release_atom_v, guard->ledger_key, settled);
                               return reply(std::move(r));
                             }
                             // Not looked up, and answered by something else than its guarded write (a refusal
                             // before it, a failure): an answer stored under the key answers instead.
                             self->request(ledger, ctx->timeout, check_atom_v, guard->ledger_key, guard->fingerprint)
                               .then(
                                 [ctx, reply, ledger, guard, r](ledger_verdict& found) mutable {
                                   int now = found.kind == ledger_verdict::replay     ? replayed
                                             : found.kind == ledger_verdict::mismatch ? mismatched
                                                                                      : unsettled;
                                   caf::anon_send(ledger, release_atom_v, guard->ledger_key, now);
                                   if (now == replayed)
                                     return reply(with_position(*ctx, domain::replay_of(found.answer), found.at));
                                   if (now == mismatched) return reply(domain::key_mismatch_reply());
                                   reply(std::move(r));
                                 },
                                 [reply, ledger, guard](caf::error& e) {
                                   caf::anon_send(ledger, release_atom_v, guard->ledger_key,
                                                  static_cast<int>(unsettled));
                                   reply(backend_unavailable("idempotency ledger", classify(e)));
                                 });
                           }});
      },
      [reply](caf::error& e) { reply(backend_unavailable("idempotency ledger", classify(e))); });
}

/// What `job`'s plan sees, its request and parameters moved out of `job`.
std::shared_ptr<request_context> context_of(request_job& job, domain::principal who) {
  auto ctx = std::make_shared<request_context>();
  ctx->request = std::move(job.request);
  ctx->params = std::move(job.params);
  ctx->actors = job.actors;
  ctx->timeout = job.deadlines ? caf::duration{caf::infinite} : caf::duration{job.timeout};
  ctx->page_tokens = job.page_tokens;
  ctx->feed_cursors = job.feed_cursors;
  ctx->recent_sign_in_seconds = job.recent_sign_in_seconds;
  ctx->who = std::move(who);
  return ctx;
}

void run_authorised(caf::event_based_actor* self, std::shared_ptr<request_job> job,
                    std::shared_ptr<reply_once> answer, domain::principal who) {
  auto ctx = job->prepared ? job->prepared : context_of(*job, std::move(who));

  auto join = std::make_shared<join_state>();
  auto finish = [join, answer, ctx] {
    if (--join->pending > 0) return;
    domain::api_reply r;
    if (!join->rate) {
      r = backend_unavailable("rate limiter", join->rate_failure);
    } else if (!join->rate->admitted) {
      r = rate_limited(*join->rate);
    } else {
      r = std::move(*join->plan_reply);
    }
    r.tenant = ctx->who.tenant_id;
    r.client_id = ctx->who.client_id;
    (*answer)(std::move(r));
  };

  auto plan_done = [join, finish](domain::api_reply r) {
    join->plan_reply = std::move(r);
    finish();
  };
  // A read runs beside the rate limiter (its answer is dropped if refused). A write runs only
  // once admitted: 429 must mean "not executed", or a client would retry a write that happened.
  const auto& method = ctx->request.method;
  bool write = method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
  if (job->admitted) {  // the rate limiter said yes to its header
    join->rate = rate_decision{true, 0};
    finish();
    return run_plan(self, job, ctx, plan_done);
  }
  if (ctx->actors->rates) {  // decided in place: no message to the rate limiter
    join->rate = ctx->actors->rates->admit(ctx->who.client_id);
    finish();
    if (join->rate->admitted) return run_plan(self, job, ctx, plan_done);
    return finish();
  }
  if (!ctx->actors->get<rate_limiter_actor>()) {
    finish();
    if (write) return finish();  // answered 503 by the join; nothing runs
    return run_plan(self, job, ctx, plan_done);
  }
  self->request(ctx->actors->get<rate_limiter_actor>(), ctx->timeout, admit_atom_v, ctx->who.client_id)
    .then(
      [self, job, ctx, join, finish, plan_done, write](rate_decision d) {
        join->rate = d;
        finish();
        if (write) {
          if (d.admitted) return run_plan(self, job, ctx, plan_done);
          finish();
        }
      },
      [join, finish, write](caf::error& e) {
        join->rate_failure = classify(e);
        finish();
        if (write) finish();
      });
  if (!write) run_plan(self, job, ctx, plan_done);
}


/// The rate limiter's part of admitting a header: its yes admits the request (its body may be
/// read); a no is 429 before any body is read.
void admit_header(caf::event_based_actor* self, std::shared_ptr<request_job> job, std::shared_ptr<reply_once> answer,
                  domain::principal who) {
  auto refuse = [answer, who](domain::api_reply r) { (*answer)(attributed(std::move(r), who)); };
  if (job->actors->rates) {  // decided in place
    auto d = job->actors->rates->admit(who.client_id);
    if (!d.admitted) return refuse(rate_limited(d));
    if (answer->settle()) job->on_admitted(std::move(who));
    return;
  }
  auto limiter = job->actors->get<rate_limiter_actor>();
  if (!limiter) return refuse(backend_unavailable("rate limiter", backend_error::gone));
  auto ask = job->deadlines ? caf::duration{caf::infinite} : caf::duration{job->timeout};
  auto client = who.client_id;
  self->request(limiter, ask, admit_atom_v, std::move(client))
    .then(
      [job, answer, refuse, who = std::move(who)](rate_decision d) mutable {
        if (!d.admitted) return refuse(rate_limited(d));
        if (answer->settle()) job->on_admitted(std::move(who));
      },
      [refuse](caf::error& e) { refuse(backend_unavailable("rate limiter", classify(e))); });
}

/// 403 SCOPE_MISSING when `who`'s token lacks the route's scope.
std::optional<domain::api_reply> scope_refusal(const request_job& job, const domain::principal& who) {
  if (job.required_scope.empty() || who.has_scope(job.required_scope)) return std::nullopt;
  return attributed(domain::api_reply::failure(domain::error_id::scope_missing,
                                               "The token does not carry the scope " + job.required_scope + ".",
                                               {{"scopes", "requires " + job.required_scope}}),
                    who);
}

/// The caller of `job`, verified, in scope and admitted by the rate table where the request
/// arrives: possible when the token is in the token cache and the rate table is published, since
/// then no actor would be asked. nullopt when an actor must be, or when the request was refused
/// here (403 SCOPE_MISSING, 429: answered through `job.reply`, and `refused` set).
std::optional<domain::principal> admitted_here(request_job& job, bool& refused) {
  if (!job.actors || !job.actors->tokens || !job.actors->rates) return std::nullopt;
  auto token = bearer_token(job.request.authorization);
  if (token.empty()) return std::nullopt;
  auto who = job.actors->tokens->find(token, domain::now_seconds());
  if (!who) return std::nullopt;
  std::optional<domain::api_reply> refusal = scope_refusal(job, *who);
  if (!refusal)
    if (auto d = job.actors->rates->admit(who->client_id); !d.admitted) refusal = attributed(rate_limited(d), *who);
  if (!refusal) return who;
  refused = true;
  job.reply(std::move(*refusal));
  return std::nullopt;
}

/// The admission of a header decided where it arrives, without a coordinator (`admitted_here`).
/// False when an actor must be asked (the coordinator then decides, as for any other request).
bool admitted_in_place(request_job& job) {
  bool refused = false;
  auto who = admitted_here(job, refused);
  if (who) job.on_admitted(std::move(*who));
  return who || refused;
}

/// A request of a route run in place (a read), answered on the calling thread when no actor need
/// be asked: admitted here (`admitted_here`), and a plan that finds what it reads in the shared
/// caches. A plan that would ask an actor throws `coordinator_needed` before it answers; the
/// request then goes to a coordinator, its caller verified and charged once (`prepared`).
/// False when a coordinator is needed.
bool answered_in_place(request_job& job) {
  if (!job.in_place || job.on_admitted || job.admitted || !job.request.position.empty()) return false;
  bool refused = false;
  auto who = admitted_here(job, refused);
  if (!who) return refused;
  auto ctx = context_of(job, *who);
  auto answer = std::make_shared<std::optional<domain::api_reply>>();
  try {
    job.plan(plan_run{nullptr, ctx, [answer](domain::api_reply r) {
                        if (!*answer) *answer = std::move(r);
                      }});
  } catch (const coordinator_needed&) {
    answer->reset();
  } catch (const std::exception&) {
    // What a coordinator's death answers (its guard, `reply_once`).
    if (!*answer) *answer = backend_unavailable("coordinator", backend_error::other);
  }
  if (*answer) {
    job.reply(attributed(std::move(**answer), *who));
    return true;
  }
  job.admitted = std::move(*who);
  job.prepared = std::move(ctx);
  return false;
}

/// After auth: the scope check, then the authorised part of the request.
void on_verified(caf::event_based_actor* self, std::shared_ptr<request_job> job, std::shared_ptr<reply_once> answer,
                 auth_outcome out) {
  if (!out.ok) {
    domain::api_reply r;
    r.error = std::move(out.error);
    (*answer)(std::move(r));
    return;
  }
  if (auto refusal = scope_refusal(*job, out.who)) return (*answer)(std::move(*refusal));
  if (job->on_admitted) return admit_header(self, job, answer, std::move(out.who));
  run_authorised(self, job, answer, std::move(out.who));
}

void start(caf::event_based_actor* self, std::shared_ptr<request_job> job) {
  auto answer = std::make_shared<reply_once>(std::move(job->reply), job->timeout);
  answer->bind(self->address());
  if (job->deadlines) job->deadlines->watch(deadline_watch::clock::now() + job->timeout, answer);
  if (job->admitted) return run_authorised(self, job, answer, *job->admitted);
  auto token = bearer_token(job->request.authorization);  // not empty: `coordinate` answered that
  // A token the auth actor verified before needs no round trip to it.
  if (job->actors->tokens)
    if (auto who = job->actors->tokens->find(token, domain::now_seconds()))
      return on_verified(self, job, answer, auth_outcome{true, std::move(*who), {}});
  if (!job->actors->get<auth_actor>()) {
    (*answer)(backend_unavailable("auth", backend_error::gone));
    return;
  }
  auto ask = job->deadlines ? caf::duration{caf::infinite} : caf::duration{job->timeout};
  self->request(job->actors->get<auth_actor>(), ask, verify_atom_v, std::string{token})
    .then([self, job, answer](auth_outcome& out) { on_verified(self, job, answer, std::move(out)); },
          [answer](caf::error& e) { (*answer)(backend_unavailable("auth", classify(e))); });
}

}  // namespace

const std::string& request_context::param(std::string_view name) const {
  static const std::string none;
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return none;
}

domain::api_reply backend_unavailable(std::string_view concern, backend_error why) {
  std::string_view what = why == backend_error::timeout           ? "did not answer in time"
                          : why == backend_error::gone            ? "is restarting"
                          : why == backend_error::storage_failure ? "could not use its storage"
                                                                  : "failed to answer";
  auto r = domain::api_reply::failure(domain::error_id::backend_unavailable,
                                      "The " + std::string{concern} + " service " + std::string{what} + "; retry shortly.");
  r.retry_after_seconds = 1;
  return r;
}

void coordinate(caf::actor_system& sys, request_job job) {
  // No token: 401 from here, whatever the route (a coordinator would ask nobody either).
  if (!job.admitted && bearer_token(job.request.authorization).empty()) return job.reply(token_missing());
  if (job.on_admitted && admitted_in_place(job)) return;
  if (answered_in_place(job)) return;
  auto shared = std::make_shared<request_job>(std::move(job));
  // The coordinator's behavior is empty: it lives while responses are pending, then terminates.
  sys.spawn([shared](caf::event_based_actor* self) -> caf::behavior {
    start(self, shared);
    return {};
  });
}

}  // namespace cl::actors
