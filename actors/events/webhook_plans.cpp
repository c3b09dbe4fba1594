// Plans of the webhooks route group: endpoints (create, list, read, update, delete), secret
// rotation, a test message, the delivery log and replays. See actors/events/webhook_plans.hpp for who
// may see what.

#include "actors/events/webhook_plans.hpp"

#include "actors/events/changes_feed.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_support.hpp"
#include "actors/plan_write.hpp"
#include "actors/events/webhook_dispatcher.hpp"
#include "domain/clock.hpp"
#include "domain/contract.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"
#include "domain/webhook.hpp"
#include "storage/webhook_store.hpp"

#include <boost/json.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <algorithm>

namespace cl::actors {

namespace json = boost::json;

namespace {

using domain::error_id;
using policy_ptr = std::shared_ptr<const webhook_policy>;

constexpr std::size_t max_description = 256;
/// The most messages one endpoint may have in flight at once (`max_in_flight`).
constexpr std::int64_t max_in_flight_limit = 16;

json::value text_or_null(const std::string& s) {
  return s.empty() ? json::value(nullptr) : json::value(s);
}

json::value time_or_null(std::int64_t ms) {
  return ms == 0 ? json::value(nullptr) : json::value(domain::iso8601_at_ms(ms));
}

json::object webhook_json(const storage::webhook_record& w) {
  json::array types;
  for (const auto& t : w.event_types) types.emplace_back(t);
  auto now = domain::now_ms();
  return json::object{
    {"id", w.id},
    {"url", w.url},
    {"event_types", std::move(types)},
    {"description", w.description},
    {"enabled", w.enabled},
    {"max_in_flight", w.max_in_flight},
    {"status", !w.enabled ? "disabled" : w.failing_since_ms != 0 ? "failing" : "active"},
    {"disabled_reason", text_or_null(w.disabled_reason)},
    {"failing_since", time_or_null(w.failing_since_ms)},
    {"previous_secret_expires_at", time_or_null(w.previous_until_ms > now ? w.previous_until_ms : 0)},
    {"created", w.created},
    {"updated", w.updated},
  };
}

domain::api_reply no_store(domain::api_reply r) {
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

domain::api_error missing_error(const std::string& id) {
  return domain::api_error{error_id::webhook_not_found, "No webhook " + id.substr(0, 64) + " is yours.",
                           {{"id", id.substr(0, 64)}}};
}

domain::api_reply missing(const std::string& id) {
  return domain::api_reply::from(missing_error(id));
}

/// The group's policy, then `k`.
void with_policy(const plan_run& run, std::function<void(policy_ptr)> k) {
  ask(
    run, run->actors->get<webhook_dispatcher_actor>(), "webhooks",
    [k = std::move(k)](policy_ptr& p) { k(std::move(p)); }, webhook_policy_atom_v);
}

/// Runs `read` on the dispatcher (the store's reads), then answers what it left in `*reply`.
void read_then_answer(const plan_run& run,
                      std::function<domain::api_reply(const storage::record_store&, const webhook_policy&)> read) {
  auto reply = std::make_shared<domain::api_reply>();
  webhook_read_job job{[reply, read = std::move(read)](const storage::record_store& s, const webhook_policy& p) {
    *reply = read(s, p);
  }};
  ask(
    run, run->actors->get<webhook_dispatcher_actor>(), "webhooks",
    [run, reply](bool) { run.answer(std::move(*reply)); }, webhook_read_atom_v, std::move(job));
}

/// Wakes the dispatcher after a commit that changed what it delivers.
std::function<void()> wake_dispatcher(const request_context& ctx) {
  return [d = ctx.actors->get<webhook_dispatcher_actor>()] {
    if (d) caf::anon_send(d, webhook_wake_atom_v, std::uint64_t{0});
  };
}

/// The caller's webhook `id` in `tx`, or nullopt (another's or none: the same answer).
std::optional<storage::webhook_record> owned(const storage::read_view& view, const request_context& ctx,
                                             const std::string& id) {
  auto w = storage::webhooks(view).get(ctx.who.tenant_id, id);
  if (!w || w->owner != ctx.who.subject) return std::nullopt;
  return w;
}

/// The caller's webhook named by the path's `id` in `tx`, or nullopt with `outcome` refusing 404.
std::optional<storage::webhook_record> owned_or_refuse(const storage::read_view& view, const request_context& ctx,
                                                       write_outcome& outcome) {
  auto id = ctx.param("id");
  auto w = owned(view, ctx, id);
  if (!w) outcome.refusal = missing_error(id);
  return w;
}

/// A checked `url` member: the URL policy, and an address literal the address policy refuses.
std::optional<domain::api_reply> check_url(const json::value& v, const webhook_policy& p) {
  if (!v.is_string()) return invalid_field("/url", "must be a string");
  auto parsed = domain::parse_webhook_url(std::string{v.as_string()}, p.https_only);
  if (auto* why = std::get_if<std::string>(&parsed)) return invalid_field("/url", *why);
  auto& t = std::get<domain::webhook_target>(parsed);
  // A name is checked at every delivery attempt (it may resolve differently by then); a literal now.
  if (auto a = domain::host_address(t.host); a && !domain::address_allowed(*a, p.allowed_networks))
    return invalid_field("/url", "names an address deliveries may not reach (loopback, private, link-local, "
                                 "reserved; webhooks.allowed_networks opens such networks)");
  return std::nullopt;
}

/// Checked `event_types`: known feed types, each once (empty: all).
std::variant<std::vector<std::string>, domain::api_reply> check_types(const json::value& v) {
  if (!v.is_array()) return invalid_field("/event_types", "must be an array of event types");
  std::vector<std::string> types;
  const auto& known = change_event_types();
  for (const auto& t : v.as_array()) {
    if (!t.is_string() || std::find(known.begin(), known.end(), std::string{t.as_string()}) == known.end())
      return invalid_field("/event_types", "must hold event types of the change feed (docs/api.md, Events)");
    std::string type{t.as_string()};
    if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(std::move(type));
  }
  return types;
}

std::optional<domain::api_reply> check_description(const json::value& v) {
  if (!v.is_string() || v.as_string().size() > max_description)
    return invalid_field("/description", "must be a string of at most 256 bytes");
  return std::nullopt;
}

/// Applies the members of `body` to `w` (create and update share it); a refusal, or nullopt.
std::optional<domain::api_reply> apply_members(const json::object& body, const webhook_policy& p,
                                               storage::webhook_record& w) {
  if (auto* v = body.if_contains("url")) {
    if (auto r = check_url(*v, p)) return r;
    w.url = std::string{v->as_string()};
  }
  if (auto* v = body.if_contains("event_types")) {
    auto types = check_types(*v);
    if (auto* r = std::get_if<domain::api_reply>(&types)) return std::move(*r);
    w.event_types = std::move(std::get<std::vector<std::string>>(types));
  }
  if (auto* v = body.if_contains("description")) {
    if (auto r = check_description(*v)) return r;
    w.description = std::string{v->as_string()};
  }
  if (auto* v = body.if_contains("max_in_flight")) {
    if (!v->is_int64() || v->as_int64() < 1 || v->as_int64() > max_in_flight_limit)
      return invalid_field("/max_in_flight", "must be an integer from 1 to 16");
    w.max_in_flight = static_cast<std::int32_t>(v->as_int64());
  }
  if (auto* v = body.if_contains("enabled")) {
    if (!v->is_bool()) return invalid_field("/enabled", "must be true or false");
    if (v->as_bool() && !w.enabled) {
      w.disabled_reason.clear();
      w.failing_since_ms = 0;
    }
    w.enabled = v->as_bool();
  }
  return std::nullopt;
}

/// The first change-log sequence at or after `ms` (by time), or the last +1 when none is.
std::uint64_t first_at_or_after(const storage::record_store& store, std::int64_t ms) {
  auto first = store.read_from(0, 1);
  auto last = store.last_change();
  if (first.empty()) return last + 1;
  std::uint64_t lo = first.front().seq, hi = last + 1;  // the answer is in [lo, hi]
  while (lo < hi) {
    auto mid = lo + (hi - lo) / 2;
    auto at = store.read_from(mid - 1, 1);
    if (at.empty() || at.front().at_ms >= ms) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/// Parses an RFC 3339 member into Unix milliseconds.
std::optional<std::int64_t> time_member(const json::object& body, const char* name) {
  auto* v = body.if_contains(name);
  if (!v || !v->is_string()) return std::nullopt;
  auto s = domain::parse_utc(std::string{v->as_string()});
  if (!s) return std::nullopt;
  return *s * 1000;
}

}  // namespace

void plan_create_webhook(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto body = std::make_shared<json::object>(std::move(std::get<json::object>(parsed)));
  if (auto r = unknown_members(*body, {"url", "event_types", "description", "max_in_flight"}))
    return run.answer(std::move(*r));
  if (!body->contains("url")) return run.answer(invalid_field("/url", "is required"));
  with_policy(run, [run, body](policy_ptr p) {
    storage::webhook_record w;
    w.tenant = run->who.tenant_id;
    w.id = domain::random_id("whk_");
    w.owner = run->who.subject;
    w.client_id = run->who.client_id;
    if (auto r = apply_members(*body, *p, w)) return run.answer(std::move(*r));
    auto secret = domain::new_webhook_secret();
    w.secret_sealed = domain::seal_webhook_secret(p->secret_key, secret);
    w.created = w.updated = domain::format_utc(domain::now_seconds());
    auto outcome = std::make_shared<write_outcome>();
    storage::mutation m = [w, secret, outcome, max = p->max_per_owner](storage::write_txn& tx) mutable {
      auto& store = storage::webhooks(tx);
      if (store.owned(w.tenant, w.owner, "", max).size() >= max) {
        outcome->refusal = domain::api_error{
          error_id::limit_exceeded, "A principal may own at most " + std::to_string(max) + " webhooks.",
          {{"webhooks.max_per_owner", std::to_string(max)}}};
        return false;
      }
      w.cursor = tx.last_logged();  // deliveries start with the next change
      store.put(w);
      hold_change_log(tx, w);
      auto o = webhook_json(w);
      o["secret"] = secret;  // shown once: here
      auto r = no_store(json_reply(201, json::serialize(o)));
      r.headers.emplace_back("Location", "/v0/content-lake/webhooks/" + w.id);
      outcome->reply = std::move(r);
      return true;
    };
    write_then(run, std::move(m), outcome, "The webhook", wake_dispatcher(*run));
  });
}

void plan_list_webhooks(const plan_run& run) {
  read_then_answer(run, [run](const storage::record_store& s, const webhook_policy& p) {
    json::array items;
    for (const auto& w : storage::webhooks(s).owned(run->who.tenant_id, run->who.subject, "", p.max_per_owner))
      items.push_back(webhook_json(w));
    return no_store(json_reply(200, json::serialize(json::object{{"webhooks", std::move(items)}})));
  });
}

void plan_get_webhook(const plan_run& run) {
  read_then_answer(run, [run](const storage::record_store& s, const webhook_policy&) {
    auto id = run->param("id");
    auto w = owned(s, *run, id);
    if (!w) return missing(id);
    return no_store(json_reply(200, json::serialize(webhook_json(*w))));
  });
}

void plan_update_webhook(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto body = std::make_shared<json::object>(std::move(std::get<json::object>(parsed)));
  if (auto r = unknown_members(*body, {"url", "event_types", "description", "max_in_flight", "enabled"}))
    return run.answer(std::move(*r));
  with_policy(run, [run, body](policy_ptr p) {
    // Checked before the write (the stored endpoint does not change what is valid).
    storage::webhook_record scratch;
    if (auto r = apply_members(*body, *p, scratch)) return run.answer(std::move(*r));
    auto outcome = std::make_shared<write_outcome>();
    storage::mutation m = [run, body, p, outcome](storage::write_txn& tx) {
      auto w = owned_or_refuse(tx, *run, *outcome);
      if (!w) return false;
      apply_members(*body, *p, *w);
      w->updated = domain::format_utc(domain::now_seconds());
      storage::webhooks(tx).put(*w);
      hold_change_log(tx, *w);
      outcome->reply = no_store(json_reply(200, json::serialize(webhook_json(*w))));
      return true;
    };
    write_then(run, std::move(m), outcome, "The webhook", wake_dispatcher(*run));
  });
}

void plan_delete_webhook(const plan_run& run) {
  auto outcome = std::make_shared<write_outcome>();
  storage::mutation m = [run, outcome](storage::write_txn& tx) {
    auto w = owned_or_refuse(tx, *run, *outcome);
    if (!w) return false;
    storage::webhooks(tx).erase(w->tenant, w->id);
    hold_change_log(tx, *w, false);
    domain::api_reply r;
    r.status = 204;
    outcome->reply = std::move(r);
    return true;
  };
  write_then(run, std::move(m), outcome, "The webhook");
}

void plan_rotate_webhook_secret(const plan_run& run) {
  if (auto refusal = refuse_body(run->request)) return run.answer(std::move(*refusal));
  with_policy(run, [run](policy_ptr p) {
    auto secret = domain::new_webhook_secret();
    auto sealed = domain::seal_webhook_secret(p->secret_key, secret);
    auto outcome = std::make_shared<write_outcome>();
    storage::mutation m = [run, p, secret, sealed, outcome](storage::write_txn& tx) {
      auto w = owned_or_refuse(tx, *run, *outcome);
      if (!w) return false;
      // The old secret keeps signing beside the new one for the overlap: receivers switch over.
      w->previous_secret_sealed = w->secret_sealed;
      w->previous_until_ms = domain::now_ms() + p->rotation_overlap_ms;
      w->secret_sealed = sealed;
      w->updated = domain::format_utc(domain::now_seconds());
      storage::webhooks(tx).put(*w);
      auto o = webhook_json(*w);
      o["secret"] = secret;
      outcome->reply = no_store(json_reply(200, json::serialize(o)));
      return true;
    };
    write_then(run, std::move(m), outcome, "The webhook");
  });
}

void plan_test_webhook(const plan_run& run) {
  if (auto refusal = refuse_body(run->request)) return run.answer(std::move(*refusal));
  auto message_id = domain::random_id("msg_");
  auto outcome = std::make_shared<write_outcome>();
  storage::mutation m = [run, message_id, outcome](storage::write_txn& tx) {
    auto w = owned_or_refuse(tx, *run, *outcome);
    if (!w) return false;
    auto now = domain::now_ms();
    storage::webhook_retry r;
    r.tenant = w->tenant;
    r.webhook_id = w->id;
    r.message_id = message_id;
    r.event_type = "webhook.test";
    r.body = "{\"id\":" + domain::json_string(message_id) + ",\"type\":\"webhook.test\",\"webhook_id\":"
             + domain::json_string(w->id) + ",\"occurred_at\":" + domain::json_string(domain::iso8601_at_ms(now)) + "}";
    r.due_ms = now;
    storage::webhooks(tx).schedule(r);
    outcome->reply = no_store(json_reply(202, json::serialize(json::object{{"message_id", message_id}})));
    return true;
  };
  write_then(run, std::move(m), outcome, "The test message", wake_dispatcher(*run));
}

void plan_list_webhook_deliveries(const plan_run& run) {
  std::size_t page_size = 50;
  if (auto raw = query_param(run->request.query, "page_size"); !raw.empty()) {
    auto n = positive(raw);
    if (!n || *n > 100) return run.answer(invalid_field("page_size", "must be 1 to 100"));
    page_size = static_cast<std::size_t>(*n);
  }
  std::uint64_t before = 0;
  if (auto raw = query_param(run->request.query, "before"); !raw.empty()) {
    auto n = positive(raw);
    if (!n) return run.answer(invalid_field("before", "must be a delivery number from this log"));
    before = static_cast<std::uint64_t>(*n);
  }
  read_then_answer(run, [run, page_size, before](const storage::record_store& s, const webhook_policy&) {
    auto id = run->param("id");
    if (!owned(s, *run, id)) return missing(id);
    auto entries = storage::webhooks(s).deliveries(run->who.tenant_id, id, before, page_size + 1);
    bool more = entries.size() > page_size;
    if (more) entries.resize(page_size);
    json::array items;
    for (const auto& d : entries)
      items.push_back(json::object{
        {"number", d.number},
        {"message_id", text_or_null(d.message_id)},
        {"event_type", text_or_null(d.event_type)},
        {"attempt", d.attempt},
        {"attempted_at", domain::iso8601_at_ms(d.at_ms)},
        {"status", d.status == 0 ? json::value(nullptr) : json::value(d.status)},
        {"latency_ms", d.latency_ms},
        {"outcome", d.outcome},
        {"error", text_or_null(d.error)},
        {"next_attempt_at", time_or_null(d.next_attempt_ms)},
      });
    json::object o{{"deliveries", std::move(items)}};
    o["next_before"] = more ? json::value(entries.back().number) : json::value(nullptr);
    return no_store(json_reply(200, json::serialize(o)));
  });
}

void plan_replay_webhook(const plan_run& run) {
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  auto body = std::make_shared<json::object>(std::move(std::get<json::object>(parsed)));
  if (auto r = unknown_members(*body, {"message_id", "since", "until"})) return run.answer(std::move(*r));
  bool by_message = body->contains("message_id");
  if (by_message == body->contains("since"))
    return run.answer(invalid_field("/", "must name either a message_id or a time range (since, until)"));
  if (by_message && (!body->at("message_id").is_string() || body->contains("until")))
    return run.answer(invalid_field("/message_id", "must be a message id from the delivery log, alone"));
  std::int64_t since = 0, until = domain::now_ms();
  if (!by_message) {
    auto s = time_member(*body, "since");
    if (!s) return run.answer(invalid_field("/since", "must be an RFC 3339 time"));
    since = *s;
    if (body->contains("until")) {
      auto u = time_member(*body, "until");
      if (!u || *u < since) return run.answer(invalid_field("/until", "must be an RFC 3339 time, not before since"));
      until = *u;
    }
  }
  // Where the replay runs in the change log (read on the dispatcher), then recorded on the endpoint.
  struct range {
    bool found = false;
    std::uint64_t from = 0, to = 0;
    domain::api_reply refusal;
  };
  auto found = std::make_shared<range>();
  webhook_read_job job{
    [run, body, by_message, since, until, found](const storage::record_store& s, const webhook_policy&) {
      auto id = run->param("id");
      if (!owned(s, *run, id)) {
        found->refusal = missing(id);
        return;
      }
      if (by_message) {
        std::string wanted{body->at("message_id").as_string()};
        for (const auto& d : storage::webhooks(s).deliveries(run->who.tenant_id, id, 0, 100000))
          if (d.message_id == wanted && d.seq != 0) {
            found->found = true;
            found->from = found->to = d.seq;
            return;
          }
        found->refusal = invalid_field("/message_id", "is not an event in this webhook's delivery log");
        return;
      }
      found->from = first_at_or_after(s, since);
      found->to = first_at_or_after(s, until + 1) - 1;
      found->found = true;
    }};
  ask(
    run, run->actors->get<webhook_dispatcher_actor>(), "webhooks",
    [run, found](bool) {
      if (!found->found) return run.answer(std::move(found->refusal));
      auto outcome = std::make_shared<write_outcome>();
      storage::mutation m = [run, found, outcome](storage::write_txn& tx) {
        auto w = owned_or_refuse(tx, *run, *outcome);
        if (!w) return false;
        bool any = found->from <= found->to && found->from > 0;
        if (any) {
          w->replay_next = found->from;
          w->replay_last = found->to;
          w->replay_within.clear();
          storage::webhooks(tx).put(*w);
        }
        outcome->reply = no_store(json_reply(202, json::serialize(json::object{{"replaying", any}})));
        return true;
      };
      write_then(run, std::move(m), outcome, "The replay", wake_dispatcher(*run));
    },
    webhook_read_atom_v, std::move(job));
}

}  // namespace cl::actors
