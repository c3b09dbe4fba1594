#pragma once
/// The per-request coordinator: verifies the token, checks the route's scope, then runs the
/// rate limiter and the route's plan in parallel and joins their replies into one answer.

#include "actors/directory.hpp"
#include "actors/metrics.hpp"
#include "domain/exchange.hpp"
#include "domain/idempotency.hpp"
#include "domain/principal.hpp"

namespace cl::domain {
class page_token_codec;
class feed_cursor_codec;
}

#include <caf/duration.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <cstdint>
#include <chrono>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::actors {

class deadline_watch;

/// Delivers the answer of one request; callable from any thread, exactly once.
using reply_fn = std::function<void(domain::api_reply)>;

/// A write request that carries an Idempotency-Key and now holds it (the ledger said "fresh" or
/// "unchecked").
struct idempotency_guard {
  domain::ledger_key ledger_key;
  std::string fingerprint;  ///< domain::request_fingerprint
  std::int64_t retention_ms = 0;
  /// What the guarded write decided under the key, its last run (set on the writer's thread,
  /// read once the writer answered): `ledger_settlement`.
  std::shared_ptr<std::atomic<int>> settled = std::make_shared<std::atomic<int>>(0);
};

/// What a route's plan sees: the request, the verified caller and the actors it may ask.
struct request_context {
  domain::api_request request;
  std::vector<std::pair<std::string, std::string>> params;  ///< path parameters
  domain::principal who;
  std::shared_ptr<const concern_handles> actors;
  /// What every ask of the plan passes as its timeout: `caf::infinite` when the request's
  /// deadline is watched as a whole (the service), else a finite bound per ask.
  caf::duration timeout{std::chrono::milliseconds{2000}};
  std::shared_ptr<const domain::page_token_codec> page_tokens;  ///< for list routes
  std::shared_ptr<const domain::feed_cursor_codec> feed_cursors;  ///< lists' `changes_cursor`
  /// Set on a write with an Idempotency-Key: `write_then` stores its answer with the write.
  std::shared_ptr<const idempotency_guard> idempotency;
  /// Spec 5.4: how old a person's last sign-in may be for a sensitive operation
  /// (`auth.recent_sign_in_seconds`).
  std::int64_t recent_sign_in_seconds = 900;
  /// The change-log position the request sent (`Content-Lake-Position`; 0: none): this node's
  /// reads already reflect it (checked before the plan runs); a search also waits for its index.
  std::uint64_t at_least = 0;

  /// The value of path parameter `name` (empty if absent).
  const std::string& param(std::string_view name) const;
};

/// Thrown where a plan running in place would need its coordinator (an actor to ask): nothing
/// was answered, and the plan had no effect (routes run in place are reads: `http::route`).
struct coordinator_needed {};

/// One request's plan as it runs: the coordinator actor it runs in, what the request sees, and its
/// one answer. A plan and every helper it calls take it whole, and a continuation captures it
/// whole: a copy is an actor pointer and one reference count (the answer's function is held once,
/// where each continuation used to copy it).
class plan_run {
 public:
  /// `self` null: the plan runs in place, on the thread that read the request (`coordinate`).
  plan_run(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn answer)
      : self_(self), state_(std::make_shared<const state>(state{std::move(ctx), std::move(answer)})) {}

  /// The coordinator: where an ask's answer is handled (never blocked, never shared). A plan run
  /// in place has none: asking for it throws `coordinator_needed`, and the request goes to a
  /// coordinator, which runs the plan again from its start.
  caf::event_based_actor* self() const {
    if (!self_) throw coordinator_needed{};
    return self_;
  }
  /// Whether the plan runs in place, answering from the shared caches only (`ask` then stops at
  /// its first ask and hands the request to a coordinator).
  bool in_place() const { return self_ == nullptr; }
  /// The request, the caller and the actors it may ask.
  const request_context* operator->() const { return state_->ctx.get(); }
  const request_context& operator*() const { return *state_->ctx; }
  const std::shared_ptr<const request_context>& context() const { return state_->ctx; }
  /// Answers the request. Called once; the coordinator's guard drops any later answer.
  void answer(domain::api_reply r) const { state_->answer(std::move(r)); }
  /// The same request answered through `reply` instead: a step that adds to, or acts on, what a
  /// helper answers, then answers this run itself.
  plan_run answering(reply_fn reply) const { return plan_run{self_, state_->ctx, std::move(reply)}; }

 private:
  struct state {
    std::shared_ptr<const request_context> ctx;
    reply_fn answer;
  };
  caf::event_based_actor* self_;
  std::shared_ptr<const state> state_;
};

/// A route's plan: runs inside the coordinator, asks concern actors (always with the request's
/// timeout and an error handler, `ask` in actors/plan_support.hpp) and answers once.
using plan_fn = void (*)(const plan_run& run);

/// One request handed from the HTTP layer to a coordinator.
struct request_job {
  domain::api_request request;
  std::vector<std::pair<std::string, std::string>> params;
  std::string required_scope;  ///< empty: any valid token
  plan_fn plan = nullptr;
  std::shared_ptr<const concern_handles> actors;
  std::chrono::milliseconds timeout{2000};  ///< the whole request's bound
  /// Watches the request's deadline; null: every ask carries `timeout` itself instead.
  std::shared_ptr<deadline_watch> deadlines;
  std::shared_ptr<const domain::page_token_codec> page_tokens;
  std::shared_ptr<const domain::feed_cursor_codec> feed_cursors;
  std::int64_t idempotency_retention_ms = 24 * 3600 * 1000;
  bool only_effect_is_write = false;  ///< http::route::only_effect_is_write
  std::int64_t recent_sign_in_seconds = 900;  ///< see request_context
  reply_fn reply;
  /// Set when the request's header was admitted before its body was read (`on_admitted`): the
  /// caller is verified, the scope checked and the rate limiter passed; none is asked again.
  std::optional<domain::principal> admitted;
  /// The route's plan may run in place first (`http::route::in_place`).
  bool in_place = false;
  /// Set when the request was admitted and its plan started in place, then needed a coordinator:
  /// the coordinator runs the plan again with this context (nothing is verified or charged twice).
  std::shared_ptr<request_context> prepared;
  /// Set for the admission of a header whose body is not read yet: the token is verified, the
  /// scope checked and the rate limiter asked, then this is called with the caller instead of a
  /// plan running; refusals (401, 403, 429, 503) go to `reply`. Exactly one of the two is called.
  std::function<void(domain::principal)> on_admitted;
};

/// Spawns a coordinator for `job` (or for the admission of its header, when `on_admitted` is set;
/// that one is decided on the calling thread, without a coordinator, when no actor need be asked:
/// a cached token and the published rate table). A route run `in_place` is answered on the
/// calling thread, `job.reply` called before this returns, when its plan finds all it needs in
/// the shared caches; else a coordinator runs it. Whatever happens to the actors it asks, `job.reply` is called
/// exactly once: a dead callee, or a request still unanswered at its deadline, becomes 503
/// BACKEND_UNAVAILABLE with `Retry-After`.
void coordinate(caf::actor_system& sys, request_job job);

enum class backend_error : std::uint8_t;

/// The reply for a concern actor that failed or was late: 503 BACKEND_UNAVAILABLE, `Retry-After`
/// 1 s, its message saying which of these it was (`why`: late, restarting, its storage failed).
domain::api_reply backend_unavailable(std::string_view concern, backend_error why);

}  // namespace cl::actors
