#include "http/api.hpp"

#include "actors/coordinator.hpp"
#include "actors/deadlines.hpp"
#include "actors/directory.hpp"
#include "actors/metrics.hpp"
#include "actors/plan_body.hpp"
#include "domain/json_text.hpp"
#include "domain/negotiation.hpp"
#include "domain/page_token.hpp"
#include "domain/query.hpp"
#include "domain/text.hpp"
#include "http/router.hpp"

#include <algorithm>
#include <charconv>

namespace cl::http {

namespace {
/// The longest path parameter (`{id}`, `{principal}`, ...) a request may carry.
constexpr std::size_t max_path_parameter_bytes = 255;
}  // namespace

struct admission {
  domain::principal who;  ///< verified, with the route's scope; the rate limiter said yes
};

void request_handler::admit(const domain::api_request&, admit_fn done) { done(std::nullopt, nullptr); }

namespace {

/// The longest `POST /faults/delay` accepts: a minute holds any request past its deadline.
constexpr int max_fault_delay_ms = 60'000;

/// The public API: route, then answer locally or through a coordinator.
class public_api final : public request_handler {
public:
  public_api(caf::actor_system& sys, std::vector<route> routes, std::shared_ptr<actors::actor_directory> directory,
             const public_api_settings& s)
    : sys_(sys),
      routes_(std::move(routes)),
      table_(routes_),
      directory_(std::move(directory)),
      timeout_(s.timeout),
      deadlines_(std::make_shared<actors::deadline_watch>(
        std::clamp(s.timeout / 10, std::chrono::milliseconds{10}, std::chrono::milliseconds{100}))),
      page_tokens_(s.page_tokens),
      feed_cursors_(s.feed_cursors),
      retention_ms_(s.idempotency_retention_ms),
      recent_sign_in_seconds_(s.recent_sign_in_seconds),
      metadata_(s.metadata) {
    locals_.metadata = metadata_.get();
  }

  void admit(const domain::api_request& request, admit_fn done) override {
    auto routed = route_of(request);
    if (routed.refusal) return done(std::move(routed.refusal), nullptr);
    if (routed.found->local) return done(std::nullopt, nullptr);
    std::string route{routed.found->path_template};
    auto job = job_for(domain::api_request{request}, std::move(routed));
    job.on_admitted = [done](domain::principal who) {
      done(std::nullopt, std::make_shared<const admission>(admission{std::move(who)}));
    };
    job.reply = [done, route = std::move(route)](domain::api_reply r) {
      r.route = route;
      done(std::move(r), nullptr);
    };
    actors::coordinate(sys_, std::move(job));
  }

  void handle(domain::api_request request, std::shared_ptr<const admission> ticket, reply_fn done) override {
    auto routed = route_of(request);
    if (routed.refusal) return done(std::move(*routed.refusal));
    std::string route{routed.found->path_template};
    if (routed.found->local) {
      auto r = routed.found->local(request, locals_);
      r.route = std::move(route);
      return done(std::move(r));
    }
    auto job = job_for(std::move(request), std::move(routed));
    if (ticket) job.admitted = ticket->who;
    job.reply = [done = std::move(done), route = std::move(route)](domain::api_reply r) {
      r.route = route;
      done(std::move(r));
    };
    actors::coordinate(sys_, std::move(job));
  }

private:
  /// A request's route, or the answer that refuses it before any actor is asked (404, 405, a
  /// repeated query parameter).
  struct routed_request {
    const route* found = nullptr;
    std::vector<std::pair<std::string, std::string>> params;
    std::optional<domain::api_reply> refusal;
  };

  routed_request route_of(const domain::api_request& request) const {
    routed_request out;
    auto m = table_.match(request.method, request.path);
    if (!m.found) {
      if (!m.allow.empty()) {
        auto r = domain::api_reply::failure(domain::error_id::method_not_allowed,
                                            "This path accepts " + m.allow + ", not " + request.method + ".");
        r.headers.emplace_back("Allow", m.allow);
        out.refusal = std::move(r);
      } else {
        out.refusal = domain::api_reply::failure(domain::error_id::route_not_found, "No route has this path.");
      }
      return out;
    }
    // Every parameter takes one value: a repeated one is refused, not resolved by "first wins".
    if (auto repeated = domain::repeated_parameter(request.query)) {
      auto shown = repeated->substr(0, 64);
      auto r = domain::api_reply::failure(domain::error_id::duplicate_parameter,
                                          "The query parameter " + shown + " was given more than once.",
                                          {{shown, "give it once"}});
      r.route = std::string{m.found->path_template};
      out.refusal = std::move(r);
      return out;
    }
    // Path and query values the stores would key on or compare: text every backend keeps as it
    // came (no U+0000, UTF-8), else 400 naming the parameter, before any actor is asked.
    auto unusable = [&](std::string field, std::string why) {
      auto r = domain::api_reply::failure(domain::error_id::invalid_argument,
                                          "The request is not valid: " + field + " " + why + ".", {{field, why}});
      r.route = std::string{m.found->path_template};
      out.refusal = std::move(r);
      return out;
    };
    for (const auto& [name, value] : m.params) {
      if (auto why = domain::text_problem(value)) return unusable("{" + name + "}", std::string{*why});
      // An id or principal is a key: longer than any the service makes or a token carries, it
      // could only be refused by a store (LMDB keeps keys of 511 bytes), so it is here, the same on
      // every backend.
      if (value.size() > max_path_parameter_bytes)
        return unusable("{" + name + "}", "must be at most " + std::to_string(max_path_parameter_bytes) + " bytes");
    }
    if (auto bad = domain::first_unusable_parameter(request.query))
      return unusable(bad->name.empty() ? "query" : bad->name, bad->why);
    if (!m.found->reads_accept)
      if (auto refusal = domain::refuse_unless_json(request.accept)) {
        auto r = domain::api_reply::from(std::move(*refusal));
        r.route = std::string{m.found->path_template};
        out.refusal = std::move(r);
        return out;
      }
    out.found = m.found;
    out.params = std::move(m.params);
    return out;
  }

  actors::request_job job_for(domain::api_request request, routed_request routed) const {
    actors::request_job job;
    job.request = std::move(request);
    job.params = std::move(routed.params);
    job.required_scope = std::string{routed.found->scope};
    job.plan = routed.found->plan;
    job.only_effect_is_write = routed.found->only_effect_is_write;
    job.in_place = routed.found->in_place;
    job.actors = directory_->snapshot();
    job.timeout = routed.found->deadline.count() > 0 ? routed.found->deadline : timeout_;
    job.deadlines = deadlines_;
    job.page_tokens = page_tokens_;
    job.feed_cursors = feed_cursors_;
    job.idempotency_retention_ms = retention_ms_;
    job.recent_sign_in_seconds = recent_sign_in_seconds_;
    return job;
  }

  caf::actor_system& sys_;
  std::vector<route> routes_;
  route_table table_;  ///< over routes_
  std::shared_ptr<actors::actor_directory> directory_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<actors::deadline_watch> deadlines_;
  std::shared_ptr<const domain::page_token_codec> page_tokens_;
  std::shared_ptr<const domain::feed_cursor_codec> feed_cursors_;
  std::int64_t retention_ms_;
  std::int64_t recent_sign_in_seconds_;
  std::shared_ptr<const resource_metadata> metadata_;
  local_context locals_;  ///< what local routes read: the metadata above
};

/// The operations listener: metrics and health, never part of the public contract.
class admin_api final : public request_handler {
public:
  admin_api(std::shared_ptr<actors::metrics> stats, std::shared_ptr<actors::service_health> health,
            std::shared_ptr<const fault_injection> faults)
    : stats_(std::move(stats)), health_(std::move(health)), faults_(std::move(faults)) {}

  /// `/faults` (list), `/faults/kill?actor=NAME` and `/faults/delay?actor=NAME&ms=N`, when fault
  /// injection is on.
  domain::api_reply handle_faults(const domain::api_request& request) const {
    if (!faults_)
      return domain::api_reply::failure(domain::error_id::fault_injection_disabled,
                                        "Fault injection is off: start the service with admin.fault_injection=true "
                                        "(CONTENTLAKE_ADMIN_FAULT_INJECTION=true).");
    auto names = [&] {
      std::string out;
      for (const auto& a : faults_->actors) out += (out.empty() ? "\"" : ",\"") + a + "\"";
      return "[" + out + "]";
    };
    if (request.path == "/faults" && request.method == "GET") {
      domain::api_reply r;
      r.body = "{\"actors\":" + names() + "}";
      return r;
    }
    // Both orders name a supervised actor; an unknown name is 400 before anything happens.
    auto actor = actors::query_param(request.query, "actor");
    auto unknown = [&] {
      return domain::api_reply::failure(domain::error_id::invalid_argument, "No supervised actor has this name.",
                                        {{"actor", "one of GET /faults"}});
    };
    bool known = std::find(faults_->actors.begin(), faults_->actors.end(), actor) != faults_->actors.end();
    if (request.path == "/faults/kill" && request.method == "POST") {
      if (!known) return unknown();
      faults_->kill(actor);
      domain::api_reply r;
      r.status = 202;
      r.body = "{\"killed\":" + domain::json_string(actor) + "}";
      return r;
    }
    if (request.path == "/faults/delay" && request.method == "POST") {
      if (!known) return unknown();
      auto ms_text = actors::query_param(request.query, "ms");
      int ms = 0;
      auto [end, ec] = std::from_chars(ms_text.data(), ms_text.data() + ms_text.size(), ms);
      if (ec != std::errc{} || end != ms_text.data() + ms_text.size() || ms < 1 || ms > max_fault_delay_ms)
        return domain::api_reply::failure(domain::error_id::invalid_argument, "ms must be a whole number of milliseconds.",
                                          {{"ms", "1 to " + std::to_string(max_fault_delay_ms)}});
      faults_->delay(actor, ms);
      domain::api_reply r;
      r.status = 202;
      r.body = "{\"delayed\":" + domain::json_string(actor) + ",\"ms\":" + std::to_string(ms) + "}";
      return r;
    }
    auto r = domain::api_reply::failure(domain::error_id::method_not_allowed,
                                        "GET /faults, POST /faults/kill?actor=NAME, POST /faults/delay?actor=NAME&ms=N.");
    r.headers.emplace_back("Allow", request.path == "/faults" ? "GET" : "POST");
    return r;
  }

  void handle(domain::api_request request, std::shared_ptr<const admission>, reply_fn done) override {
    domain::api_reply r;
    r.route = request.path;
    if (request.path == "/faults" || request.path.rfind("/faults/", 0) == 0) {
      r = handle_faults(request);
      r.route = request.path;
    } else if (request.method != "GET") {
      r = domain::api_reply::failure(domain::error_id::method_not_allowed, "The admin listener only answers GET.");
      r.headers.emplace_back("Allow", "GET");
    } else if (request.path == "/metrics") {
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = stats_->render();
    } else if (request.path == "/healthz") {
      r.body = R"({"status":"ok"})";
    } else if (request.path == "/readyz") {
      bool keys = health_->keys_loaded, draining = health_->draining, down = health_->children_down > 0;
      bool ready = keys && !draining && !down;
      std::string groups;  // the checks route groups declared, in their order
      for (const auto& c : health_->checks()) {
        bool value = *c.value;
        ready = ready && (value || !c.required);
        groups += ",\"" + c.name + "\":" + (value ? "true" : "false");
      }
      r.status = ready ? 200 : 503;
      r.body = std::string{R"({"status":")"} + (ready ? "ready" : "not_ready") + R"(","signing_keys_loaded":)"
               + (keys ? "true" : "false") + R"(,"draining":)" + (draining ? "true" : "false")
               + R"(,"actors_down":)" + (down ? "true" : "false") + groups + "}";
    } else {
      r = domain::api_reply::failure(domain::error_id::route_not_found, "The admin listener has /metrics, /healthz and /readyz.");
      r.route = {};
    }
    r.headers.emplace_back("Cache-Control", "no-store");
    done(std::move(r));
  }

private:
  std::shared_ptr<actors::metrics> stats_;
  std::shared_ptr<actors::service_health> health_;
  std::shared_ptr<const fault_injection> faults_;
};

}  // namespace

std::unique_ptr<request_handler> make_public_api(caf::actor_system& sys, std::vector<route> routes,
                                                 std::shared_ptr<actors::actor_directory> directory,
                                                 const public_api_settings& settings) {
  return std::make_unique<public_api>(sys, std::move(routes), std::move(directory), settings);
}

std::unique_ptr<request_handler> make_admin_api(std::shared_ptr<actors::metrics> stats,
                                                std::shared_ptr<actors::service_health> health,
                                                std::shared_ptr<const fault_injection> faults) {
  return std::make_unique<admin_api>(std::move(stats), std::move(health), std::move(faults));
}

}  // namespace cl::http
