// What the webhook dispatcher's deliveries are made of and how their outcomes are committed
// (actors/events/webhook_delivery.hpp).

#include "actors/events/webhook_delivery.hpp"

#include "domain/clock.hpp"
#include "domain/records.hpp"
#include "domain/webhook.hpp"

#include <random>

namespace cl::actors::webhook_delivery {

namespace {

double jitter_unit() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>{0.0, 1.0}(rng);
}

}  // namespace

std::vector<message> messages_of(const change_scan& scan) {
  std::vector<message> msgs;
  msgs.reserve(scan.events.size());
  for (const auto& e : scan.events) {
    message m;
    m.id = e.id;
    m.type = e.type;
    if (e.subject == "resource_id") m.resource_id = e.subject_id;
    m.body = change_event_json(e);
    m.seq = e.seq;
    msgs.push_back(std::move(m));
  }
  return msgs;
}

webhook_job_ptr make_job(const webhook_dispatcher_config& cfg, const storage::webhook_record& w,
                         const std::vector<message>& msgs, std::int64_t now_ms) {
  auto job = std::make_shared<webhook_job>(msgs.size());
  job->url = w.url;
  job->timeout_ms = cfg.timeout_ms;
  for (const auto* sealed : {&w.secret_sealed, &w.previous_secret_sealed}) {
    if (sealed->empty() || (sealed == &w.previous_secret_sealed && w.previous_until_ms <= now_ms)) continue;
    auto secret = domain::open_webhook_secret(cfg.secret_key, *sealed);
    if (auto key = secret ? domain::webhook_secret_key(*secret) : std::nullopt) job->keys.push_back(std::move(*key));
  }
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    job->items[i].id = msgs[i].id;
    job->items[i].body = msgs[i].body;
  }
  return job;
}

std::vector<attempt_result> results_of(webhook_job& job, std::vector<message> msgs, const metrics::counter& failures) {
  job.cancelled.store(true);
  std::vector<attempt_result> results;
  results.reserve(msgs.size());
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    auto& item = job.items[i];
    attempt_result r{std::move(msgs[i]), domain::now_ms(), {}};
    if (item.done.load(std::memory_order_acquire)) {
      r.at_ms = item.at_ms;
      r.response = item.response;
    } else {
      r.response.error = "timeout";
    }
    if (!r.response.error.empty()) failures.increment();
    results.push_back(std::move(r));
  }
  return results;
}

storage::webhook_delivery account(const webhook_dispatcher_config& cfg, storage::webhook_record& w,
                                  const attempt_result& r, std::optional<storage::webhook_retry>* retry) {
  storage::webhook_delivery d;
  d.tenant = w.tenant;
  d.webhook_id = w.id;
  d.number = w.log_next++;
  d.message_id = r.msg.id;
  d.event_type = r.msg.type;
  d.seq = r.msg.seq;
  d.attempt = r.msg.attempt;
  d.at_ms = r.at_ms;
  d.status = r.response.status;
  d.latency_ms = r.response.latency_ms;
  d.error = r.response.error;
  domain::attempt_facts facts{r.msg.attempt, r.response.error.empty(), r.response.status, r.at_ms, r.response.retry_after_ms};
  auto v = domain::judge_attempt(facts, cfg.schedule_ms, cfg.disable_after_ms, w.failing_since_ms, w.enabled,
                                 domain::now_ms(), jitter_unit());
  d.outcome = v.outcome;
  w.failing_since_ms = v.failing_since_ms;
  if (v.disable) {
    w.enabled = false;
    w.disabled_reason = v.disabled_reason;
  }
  if (v.outcome == "failed") {
    storage::webhook_retry next;
    next.tenant = w.tenant;
    next.webhook_id = w.id;
    next.message_id = r.msg.id;
    next.event_type = r.msg.type;
    next.resource_id = r.msg.resource_id;
    next.body = r.msg.body;
    next.seq = r.msg.seq;
    next.attempts = r.msg.attempt;
    next.due_ms = v.next_attempt_ms;
    d.next_attempt_ms = next.due_ms;
    *retry = std::move(next);
  }
  return d;
}

namespace {

/// The endpoint's cursor (or its replay's) after a batch that read up to `scan`.
void move_cursor(storage::webhook_writes& store, storage::webhook_record& rec, const change_scan& scan, bool replay,
                 std::uint64_t last, std::uint64_t log_size) {
  if (scan.expired && replay) {
    rec.replay_next = rec.replay_last = 0;  // what the replay asked for is gone
    rec.replay_within.clear();
  } else if (scan.expired) {
    // The log no longer holds what followed the cursor (the endpoint was disabled past
    // retention): it goes on from now, and its log says so.
    storage::webhook_delivery skipped;
    skipped.tenant = rec.tenant;
    skipped.webhook_id = rec.id;
    skipped.number = rec.log_next++;
    skipped.at_ms = domain::now_ms();
    skipped.outcome = "skipped";
    skipped.error = "retention";
    store.log_delivery(skipped, log_size);
    rec.cursor = last;
    rec.cursor_within.clear();
  } else if (replay) {
    rec.replay_next = scan.position + 1;
    rec.replay_within = scan.within;
    if (scan.position >= rec.replay_last && scan.within.empty()) {
      rec.replay_next = rec.replay_last = 0;
      rec.replay_within.clear();
    }
  } else if (scan.position > rec.cursor || (scan.position == rec.cursor && !scan.within.empty())) {
    rec.cursor = scan.position;
    rec.cursor_within = scan.within;
  }
}

}  // namespace

storage::mutation batch_outcome(std::shared_ptr<const webhook_dispatcher_config> cfg, const storage::webhook_record& w,
                                change_scan scan, bool replay, std::uint64_t last, std::vector<attempt_result> results) {
  return [cfg = std::move(cfg), tenant = w.tenant, id = w.id, scan = std::move(scan), replay, last,
          results = std::move(results)](storage::write_txn& tx) {
    auto& store = storage::webhooks(tx);
    auto rec = store.get(tenant, id);
    if (!rec) return true;  // deleted meanwhile
    for (const auto& r : results) {
      std::optional<storage::webhook_retry> retry;
      store.log_delivery(account(*cfg, *rec, r, &retry), cfg->log_size);
      if (retry) store.schedule(*retry);
    }
    move_cursor(store, *rec, scan, replay, last, cfg->log_size);
    store.put(*rec);
    hold_change_log(tx, *rec);
    return true;
  };
}

storage::mutation retry_outcome(std::shared_ptr<const webhook_dispatcher_config> cfg, storage::webhook_retry r,
                                std::optional<attempt_result> result) {
  return [cfg = std::move(cfg), r = std::move(r), result = std::move(result)](storage::write_txn& tx) {
    auto& store = storage::webhooks(tx);
    store.unschedule(r);
    if (!result) return true;
    auto rec = store.get(r.tenant, r.webhook_id);
    if (!rec) return true;
    std::optional<storage::webhook_retry> retry;
    store.log_delivery(account(*cfg, *rec, *result, &retry), cfg->log_size);
    if (retry) store.schedule(*retry);
    store.put(*rec);
    hold_change_log(tx, *rec);
    return true;
  };
}

storage::mutation idle_cursors(std::vector<std::pair<std::string, std::string>> idle, std::uint64_t seen) {
  return [idle = std::move(idle), seen](storage::write_txn& tx) {
    for (const auto& [tenant, id] : idle) {
      auto w = storage::webhooks(tx).get(tenant, id);
      if (!w || !w->enabled || w->cursor >= seen) continue;
      w->cursor = seen;
      w->cursor_within.clear();
      storage::webhooks(tx).put(*w);
      hold_change_log(tx, *w);
    }
    return true;
  };
}

webhook_worker_actor::behavior_type worker(webhook_worker_actor::pointer,
                                           std::function<webhook_response(const webhook_request&)> send,
                                           metrics::counter attempts) {
  return {[send, attempts](webhook_send_atom, const webhook_job_ptr& job) {
    for (;;) {
      auto i = job->next.fetch_add(1);
      if (i >= job->items.size() || job->cancelled.load()) return true;
      auto& item = job->items[i];
      item.at_ms = domain::now_ms();
      webhook_request r;
      r.url = job->url;
      r.body = item.body;
      r.message_id = item.id;
      r.timestamp = item.at_ms / 1000;
      r.timeout_ms = job->timeout_ms;
      for (const auto& key : job->keys) {
        if (!r.signature.empty()) r.signature += ' ';
        r.signature += domain::webhook_signature(key, item.id, r.timestamp, item.body);
      }
      attempts.increment();
      item.response = send(r);
      item.done.store(true, std::memory_order_release);
    }
  }};
}

}  // namespace cl::actors::webhook_delivery
