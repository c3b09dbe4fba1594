// How deliveries are scheduled and sent (docs/architecture.md, "Events: webhooks"):
//
// - **Slots shared fairly** (domain/fair_share.hpp). Deliveries wait in a per-tenant queue; a freed
//   slot goes to the next tenant in turn, a tenant holds at most half of `webhooks.concurrency` and
//   an endpoint an eighth, and a tenant with that many started or queued starts no more batches or
//   retries (the due retries are paged past it). So one tenant's endpoints that never answer hold
//   half the slots, not every one. The retry schedule is `domain::judge_attempt`; a delivery's
//   parts (messages, jobs, workers, the outcome transactions) are actors/events/webhook_delivery.*.
// - **SSRF is decided where the socket is made**: the client resolves the name, keeps the addresses
//   the policy allows (one parser reads a host as the resolver does, at creation and at delivery) and
//   connects by address.
// - **Kept connections** (`http::webhook_client`): one pool per service, by origin (scheme, host,
//   port), at most twice `webhooks.concurrency` waiting; a connection goes back only after a whole
//   keep-alive answer, is reused for `webhooks.keep_alive_seconds` after its name's check and 4 s
//   unused, and an unused one that became readable (the receiver closed it) is dropped. Reuse does not
//   widen SSRF: the address was checked when the connection was made, and the check is repeated within
//   the age bound. One TLS context for all (the CA store is read once).
// - **Workers and jobs**: a connection per message and a thread per message were what bounded a busy
//   endpoint (0.34 of the write rate). Workers are kept between jobs; a batch is one job, so the
//   dispatcher makes one actor round trip per batch, not per message, and signs nothing itself (the
//   worker signs each message as it sends it, so `webhook-timestamp` is the attempt's). A job's
//   messages are taken in order; with `max_in_flight` 1 one worker sends them one after the other.
//   Figures: docs/benchmarks.md (bench/webhooks).

#include "actors/events/webhook_dispatcher.hpp"
#include "actors/fault_hooks.hpp"

#include "actors/backend_error.hpp"
#include "actors/events/changes_feed.hpp"
#include "actors/events/webhook_delivery.hpp"
#include "actors/interfaces.hpp"
#include "domain/clock.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"
#include "domain/webhook.hpp"
#include "storage/leases.hpp"
#include "storage/webhook_store.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace cl::actors {

namespace {

using self_ptr = webhook_dispatcher_actor::stateful_pointer<webhook_dispatcher_state>;
using config_ptr = std::shared_ptr<const webhook_dispatcher_config>;

/// Commits within this of the first wake the dispatcher together.
constexpr std::chrono::milliseconds wake_batch{10};
/// Without commits, the dispatcher still looks this often (timers of retries, endpoints re-enabled).
constexpr std::int64_t idle_tick_ms = 1000;
/// An endpoint's cursor, when it only moved past other readers' changes, is stored at most this often.
constexpr std::chrono::seconds cursor_store_every{1};
/// The cursors of endpoints whose tenants did not write are stored this often (their hold on the
/// change log follows the dispatcher's position).
constexpr std::chrono::minutes cursor_refresh{10};
/// The wake values: a commit sends its sequence (below 2^62); these flag a round and a timer.
constexpr std::uint64_t round_now = std::uint64_t{1} << 62;
constexpr std::uint64_t timer_flag = std::uint64_t{1} << 63;

std::string endpoint_key(const std::string& tenant, const std::string& id) {
  return tenant + '\0' + id;
}

using webhook_delivery::attempt_result;
using webhook_delivery::message;

class dispatcher {
public:
  dispatcher(self_ptr self, config_ptr cfg) : self_(self), cfg_(std::move(cfg)) {}

  /// The dispatcher ends: a worker takes no further message of a job in flight, and ends once its
  /// attempt returns (within `webhooks.timeout_seconds`), not after the rest of the batch.
  void cancel_in_flight() { for (auto& job : in_flight_) job->cancelled.store(true); }

  /// Asks for a round soon (commits within `wake_batch` share it).
  void wake() {
    if (self_->state.round_pending) return;
    self_->state.round_pending = true;
    self_->delayed_send(self_, wake_batch, webhook_wake_atom_v, round_now);
  }

  /// Asks for a round at once: an endpoint that finished a batch and has more waiting does not wait
  /// for the next wake.
  void round_now_please() { self_->send(self_, webhook_wake_atom_v, round_now); }

  void round() {
    auto& st = self_->state;
    st.round_pending = false;
    if (!leading()) return arm_timer(false);
    if (cfg_->reload_every.count() > 0 && std::chrono::steady_clock::now() - st.loaded_at >= cfg_->reload_every)
      st.loaded = false;
    try {
      start_batches();
      start_retries();
      refresh_cursors();
      arm_timer();
    } catch (const std::exception& e) {
      spdlog::error("webhooks: the dispatcher could not read the store: {}", e.what());
    }
  }

  /// A plan changed an endpoint (created, updated, a test message, a replay): read them again.
  void reload() {
    self_->state.loaded = false;
    round();
  }

  void tick(std::int64_t due) {
    if (due == self_->state.timer_due_ms) self_->state.timer_due_ms = 0;
    round();
  }

private:
  writer_actor writer() const { return cfg_->directory->snapshot()->get<writer_actor>(); }
  access_actor access() const { return cfg_->directory->snapshot()->get<access_actor>(); }

  /// Whether `tenant` has as many deliveries started or queued for a slot as there are slots: its
  /// further batches and retries wait (another tenant's do not).
  bool full(const std::string& tenant) const { return self_->state.slots->full(tenant); }

  /// A round's endpoints: those of the tenants that wrote since the last round, and those still
  /// lagging. An endpoint of a tenant that did not write moves on without being read (its
  /// position is the dispatcher's `seen`): a round costs the new entries and the endpoints they
  /// concern, not every endpoint the service holds.
  void start_batches() {
    auto& st = self_->state;
    auto last = cfg_->store->last_change();
    if (!st.loaded) {
      // At start: every endpoint is lagging and reads from its own cursor; new entries are classified from here.
      if (st.seen == 0) st.seen = last;
      st.load_endpoints(*cfg_->store);
      st.loaded = true;
      st.loaded_at = std::chrono::steady_clock::now();
    }
    auto from = st.seen;
    if (from < last) {
      auto entries = cfg_->store->read_from(from, cfg_->scan_limit);
      st.seen = entries.empty() ? last : entries.back().seq;
      std::set<std::string> touched;
      bool everyone = false;  // a platform policy change concerns every tenant
      for (const auto& e : entries) {
        if (e.kind == storage::change_kind::policy) everyone = true;
        else touched.insert(e.tenant);
      }
      if (everyone)
        for (const auto& [tenant, ids] : st.by_tenant) touched.insert(tenant);
      for (const auto& tenant : touched) {
        auto it = st.by_tenant.find(tenant);
        if (it == st.by_tenant.end()) continue;
        for (const auto& id : it->second) {
          auto key = endpoint_key(tenant, id);
          // Not lagging: it has handled its tenant's entries up to `from`.
          if (!st.lagging.count(key) && !st.busy.count(key)) st.read_to[key] = std::max(st.read_to[key], from);
          st.lagging.insert(key);
        }
      }
      if (st.seen < last) wake();  // more than one scan of new entries: the next round goes on
    }
    std::vector<std::string> keys(st.lagging.begin(), st.lagging.end());
    for (const auto& key : keys) {
      if (st.busy.count(key)) continue;
      auto cut = key.find('\0');
      if (full(key.substr(0, cut))) continue;
      auto w = storage::webhooks(*cfg_->store).get(key.substr(0, cut), key.substr(cut + 1));
      if (!w || !w->enabled) {
        st.forget(key);
        continue;
      }
      auto read = std::max(w->cursor, st.read_to[key]);
      if (read >= last && w->replay_next == 0) {
        st.lagging.erase(key);  // caught up: from here its position is `seen`
        continue;
      }
      start_batch(std::move(*w), read);
    }
  }

  /// Stores the cursor of every endpoint that moved on without being read (`seen`), so its hold on
  /// the change log follows; one transaction every `cursor_refresh`.
  void refresh_cursors() {
    auto& st = self_->state;
    auto now = std::chrono::steady_clock::now();
    if (now - st.refreshed_at < cursor_refresh) return;
    st.refreshed_at = now;
    std::vector<std::pair<std::string, std::string>> idle;
    for (const auto& [tenant, ids] : st.by_tenant)
      for (const auto& id : ids) {
        auto key = endpoint_key(tenant, id);
        if (!st.lagging.count(key) && !st.busy.count(key)) idle.emplace_back(tenant, id);
      }
    auto wr = writer();
    if (idle.empty() || !wr) return;
    auto m = webhook_delivery::idle_cursors(std::move(idle), st.seen);
    self_->request(wr, std::chrono::seconds{30}, write_atom_v, std::move(m)).then([](bool) {}, [](caf::error&) {});
  }

  /// Starts the due messages, soonest first, of tenants that are not full; pages past those of
  /// full tenants (at most 4 pages of 64 a round), so one tenant's backlog never hides another's.
  void start_retries() {
    auto& st = self_->state;
    auto now = domain::now_ms();
    std::optional<storage::webhook_retry> after;
    for (int pages = 0; pages < 4; ++pages) {
      auto due = storage::webhooks(*cfg_->store).due(now, 64, after ? &*after : nullptr);
      for (auto& r : due) {
        auto key = endpoint_key(r.tenant, r.webhook_id) + '\0' + r.message_id;
        if (st.retrying.count(key) || full(r.tenant)) continue;
        st.retrying.insert(key);
        start_retry(r, key);
      }
      if (due.size() < 64) return;
      after = std::move(due.back());
    }
  }

  /// Whether this node delivers now: it holds the `webhooks` lease. Taken again after another node
  /// held it, what the dispatcher knew goes: every endpoint reads from its stored cursor.
  bool leading() {
    if (!cfg_->leases) return true;
    auto& st = self_->state;
    auto term = cfg_->leases->term(storage::lease::webhooks);
    if (term != 0 && term != st.term) st.start_over();
    st.term = term;
    return term != 0;
  }

  /// A timed wake for the soonest waiting message (`due_too`), and an idle tick.
  void arm_timer(bool due_too = true) {
    auto& st = self_->state;
    auto now = domain::now_ms();
    auto next = now + idle_tick_ms;
    if (due_too)
      if (auto due = storage::webhooks(*cfg_->store).next_due()) next = std::min(next, std::max(*due, now + 1));
    if (st.timer_due_ms != 0 && st.timer_due_ms <= next) return;
    st.timer_due_ms = next;
    self_->delayed_send(self_, std::chrono::milliseconds{next - now}, webhook_wake_atom_v,
                        static_cast<std::uint64_t>(next) | timer_flag);
  }

  template <class K>
  void with_principals(const std::string& tenant, const std::string& owner, K k, std::function<void()> failed) {
    auto a = access();
    if (!a) return failed();
    self_->request(a, std::chrono::seconds{10}, principals_atom_v, tenant, owner)
      .then([k = std::move(k)](std::vector<std::string>& principals) mutable { k(std::move(principals)); },
            [failed](caf::error&) { failed(); });
  }

  /// Reads the endpoint's next events (or its replay's) and sends them one after the other.
  void start_batch(storage::webhook_record w, std::uint64_t read) {
    auto key = endpoint_key(w.tenant, w.id);
    self_->state.busy.insert(key);
    auto release = [self = self_, key] { self->state.busy.erase(key); };
    auto owner = w.owner, tenant = w.tenant;
    with_principals(
      tenant, owner,
      [this, w = std::move(w), read, key](std::vector<std::string> principals) mutable {
        // A replay takes every other batch while the endpoint is behind, all of them once caught up.
        bool replay = false;
        if (w.replay_next > 0) {
          auto& turns = self_->state.replay_turn;
          replay = read >= cfg_->store->last_change() || turns.erase(key) > 0;
          if (!replay) turns.insert(key);
        }
        auto from = replay ? w.replay_next - 1 : read;
        // The stored position inside an entry holds only while the endpoint reads from its stored cursor.
        auto within = replay ? w.replay_within : read == w.cursor ? w.cursor_within : std::string{};
        change_scan scan;
        try {
          scan = scan_changes(*cfg_->store, *cfg_->ids, w.tenant, principals, w.event_types, from, within,
                              cfg_->scan_limit, cfg_->batch, *policy_in_force(cfg_->rights_policy));
        } catch (const std::exception& e) {
          spdlog::error("webhooks: the change log could not be read: {}", e.what());
          self_->state.busy.erase(key);
          return;
        }
        if (replay) {
          // A replay ends at its last sequence.
          scan.events.erase(std::remove_if(scan.events.begin(), scan.events.end(),
                                           [&](const change_event& e) { return e.seq > w.replay_last; }),
                            scan.events.end());
          scan.position = std::min(scan.position, w.replay_last);
        }
        auto msgs = webhook_delivery::messages_of(scan);
        auto endpoint = w;
        deliver(endpoint, std::move(msgs), [this, w = std::move(w), scan, replay, key](std::vector<attempt_result> results) {
          finish_batch(w, scan, replay, key, results);
        });
      },
      release);
  }

  /// Commits a batch's outcome: log entries, retries, the cursor, the endpoint's state.
  void finish_batch(const storage::webhook_record& w, const change_scan& scan, bool replay, const std::string& key,
                    const std::vector<attempt_result>& results) {
    auto& st = self_->state;
    bool expired = scan.expired;
    auto last = cfg_->store->last_change();
    if (!replay && !expired) st.read_to[key] = std::max(st.read_to[key], scan.position);
    auto now_steady = std::chrono::steady_clock::now();
    bool store_cursor = !results.empty() || replay || expired || !scan.within.empty()
                        || now_steady - st.stored_at[key] >= cursor_store_every;
    if (!store_cursor) {
      st.busy.erase(key);
      if (!scan.caught_up) round_now_please();
      return;
    }
    st.stored_at[key] = now_steady;
    auto m = webhook_delivery::batch_outcome(cfg_, w, scan, replay, last, results);
    auto wr = writer();
    auto again = !scan.caught_up || !results.empty() || replay || expired;
    if (!wr) {
      st.busy.erase(key);
      return;
    }
    self_->request(wr, std::chrono::seconds{30}, write_atom_v, std::move(m))
      .then(
        [this, key, again, expired, position = scan.position, caught_up = scan.caught_up](bool) {
          self_->state.busy.erase(key);
          if (expired) self_->state.read_to.erase(key);
          // An endpoint with entries waiting goes on at once; otherwise the next commit wakes it.
          if (again && (!caught_up || cfg_->store->last_change() > position)) round_now_please();
          else if (again) wake();
        },
        [this, key](caf::error& e) {
          // Not stored: the batch goes again from the stored cursor (the same webhook-ids).
          spdlog::error("webhooks: a batch's outcome could not be stored: {}", to_string(e));
          self_->state.busy.erase(key);
          self_->state.read_to.erase(key);
        });
  }

  /// One waiting message: checked again (the endpoint still enabled, the owner still reading its
  /// Resource), sent, and its outcome committed.
  void start_retry(storage::webhook_retry r, const std::string& key) {
    auto release = [self = self_, key] { self->state.retrying.erase(key); };
    auto w = storage::webhooks(*cfg_->store).get(r.tenant, r.webhook_id);
    if (!w || !w->enabled) {
      // Its endpoint is gone or disabled: the message is dropped (a replay sends it again).
      return commit_retry(r, std::nullopt, key);
    }
    auto tenant = w->tenant, owner = w->owner;
    with_principals(
      tenant, owner,
      [this, r, w = std::move(*w), key](std::vector<std::string> principals) {
        auto body = r.body;
        if (!r.resource_id.empty()) {
          bool readable = storage::holds_any_grant(cfg_->store->grants(), r.tenant, principals, r.resource_id);
          if (readable == (r.event_type == "resource.disappeared")) return commit_retry(r, std::nullopt, key);
          // Layer 3 again: the rights may have moved since the first attempt (as on the reads).
          std::map<std::string, bool> memo;
          try {
            if (!hash_shown(*cfg_->store, *policy_in_force(cfg_->rights_policy), r.tenant, r.resource_id, memo))
              body = without_hash(body);
          } catch (const std::exception& e) {
            spdlog::error("webhooks: a retry's rights could not be resolved: {}", e.what());
            self_->state.retrying.erase(key);
            return;  // tried again at the next round
          }
        }
        message m{r.message_id, r.event_type, r.resource_id, std::move(body), r.seq, r.attempts + 1};
        deliver(w, {std::move(m)}, [this, r, key](std::vector<attempt_result> results) {
          commit_retry(r, std::move(results.front()), key);
        });
      },
      release);
  }

  void commit_retry(const storage::webhook_retry& r, std::optional<attempt_result> result, const std::string& key) {
    auto m = webhook_delivery::retry_outcome(cfg_, r, std::move(result));
    auto wr = writer();
    if (!wr) {
      self_->state.retrying.erase(key);
      return;
    }
    self_->request(wr, std::chrono::seconds{30}, write_atom_v, std::move(m))
      .then(
        [this, key](bool) {
          self_->state.retrying.erase(key);
          wake();
        },
        [this, key](caf::error& e) {
          spdlog::error("webhooks: a retry's outcome could not be stored: {}", to_string(e));
          self_->state.retrying.erase(key);
        });
  }

  /// A job on its way: the messages, the workers still sending it, and what wants the outcome.
  struct job_run {
    webhook_job_ptr job;
    std::vector<message> msgs;
    std::size_t workers = 0;
    std::function<void(std::vector<attempt_result>)> done;
  };

  /// Sends `msgs` to `w` as one job: `w.max_in_flight` workers share it (1: one after the other,
  /// in order), each message signed as it goes; `done` gets every message's attempt in their order.
  void deliver(const storage::webhook_record& w, std::vector<message> msgs,
               std::function<void(std::vector<attempt_result>)> done) {
    if (msgs.empty()) return done({});
    auto run = std::make_shared<job_run>();
    auto now_ms = domain::now_ms();
    run->job = webhook_delivery::make_job(*cfg_, w, msgs, now_ms);
    auto& job = *run->job;
    in_flight_.push_back(run->job);
    run->msgs = std::move(msgs);
    run->done = std::move(done);
    if (job.keys.empty()) {
      std::vector<attempt_result> results;
      for (auto& m : run->msgs) results.push_back({std::move(m), now_ms, webhook_response{0, "secret_unreadable"}});
      return run->done(std::move(results));
    }
    run->workers = std::min<std::size_t>(run->msgs.size(), static_cast<std::size_t>(std::max(1, w.max_in_flight)));
    auto endpoint = endpoint_key(w.tenant, w.id);
    auto cap = self_->state.slots->endpoint_cap(w.max_in_flight);
    for (std::size_t k = 0; k < run->workers; ++k)
      self_->state.slots->enqueue(w.tenant, endpoint, cap, [this, tenant = w.tenant, endpoint, run] { send(tenant, endpoint, run); });
    pump();
  }

  /// Starts queued deliveries while slots are free (domain/fair_share.hpp says who goes next).
  void pump() {
    while (auto next = self_->state.slots->next()) next->item();
  }

  /// One worker on `run`'s job (it takes a slot until it answers).
  void send(const std::string& tenant, const std::string& endpoint, const std::shared_ptr<job_run>& run) {
    auto worker = take_worker();
    auto finish = [this, tenant, endpoint, run, worker](bool worker_free) {
      auto& st = self_->state;
      st.slots->finished(tenant, endpoint);
      // A worker stuck past its timeout is let go: with no handle left, it ends once its call returns.
      if (worker_free) st.idle_workers.push_back(worker);
      if (--run->workers == 0) job_done(*run);
      pump();
    };
    // Each message is bounded by the timeout; one worker may end up sending all of them.
    auto bound = std::chrono::milliseconds{cfg_->timeout_ms * static_cast<std::int64_t>(run->msgs.size()) + 5000};
    self_->request(worker, bound, webhook_send_atom_v, run->job)
      .then([finish](bool) { finish(true); }, [finish](caf::error&) { finish(false); });
  }

  /// Every worker of the job answered (or timed out): each message's attempt, in order; a message
  /// whose attempt did not end in time counts as a timeout.
  void job_done(job_run& run) {
    in_flight_.erase(std::remove(in_flight_.begin(), in_flight_.end(), run.job), in_flight_.end());
    run.done(webhook_delivery::results_of(*run.job, std::move(run.msgs), cfg_->failures));
  }

  /// A worker thread for one delivery: an idle one, or a new one (at most `concurrency` wait, as
  /// many as were in flight at once). Only the dispatcher holds them: they end with it.
  webhook_worker_actor take_worker() {
    auto& idle = self_->state.idle_workers;
    if (!idle.empty()) {
      auto w = std::move(idle.back());
      idle.pop_back();
      return w;
    }
    return self_->spawn<caf::detached>(webhook_delivery::worker, cfg_->send, cfg_->attempts);
  }

  self_ptr self_;
  config_ptr cfg_;
  std::vector<webhook_job_ptr> in_flight_;  ///< jobs some worker may still be sending
};

}  // namespace

void webhook_dispatcher_state::load_endpoints(const storage::record_store& store) {
  std::map<std::string, std::set<std::string>> now_enabled;
  std::string after;
  for (;;) {
    auto endpoints = storage::webhooks(store).enabled(after, 256);
    for (const auto& w : endpoints) {
      auto key = endpoint_key(w.tenant, w.id);
      if (!by_tenant.count(w.tenant) || !by_tenant[w.tenant].count(w.id) || w.replay_next != 0) lagging.insert(key);
      now_enabled[w.tenant].insert(w.id);
    }
    if (endpoints.size() < 256) break;
    after = storage::webhook_reads::resume_key(endpoints.back());
  }
  by_tenant = std::move(now_enabled);
  auto enabled = [this](const std::string& key) {
    auto cut = key.find('\0');
    auto it = by_tenant.find(key.substr(0, cut));
    return it != by_tenant.end() && it->second.count(key.substr(cut + 1)) > 0;
  };
  auto prune = [&](auto& by_key) {
    for (auto it = by_key.begin(); it != by_key.end();) it = enabled(it->first) ? std::next(it) : by_key.erase(it);
  };
  prune(read_to);
  prune(stored_at);
}

void webhook_dispatcher_state::forget(const std::string& key) {
  auto cut = key.find('\0');
  if (auto it = by_tenant.find(key.substr(0, cut)); it != by_tenant.end()) {
    it->second.erase(key.substr(cut + 1));
    if (it->second.empty()) by_tenant.erase(it);
  }
  lagging.erase(key);
  read_to.erase(key);
  stored_at.erase(key);
  replay_turn.erase(key);
}

void webhook_dispatcher_state::start_over() {
  loaded = false;
  seen = 0;
  by_tenant.clear();
  lagging.clear();
  read_to.clear();
  stored_at.clear();
  replay_turn.clear();
}

std::string webhook_consumer(const std::string& tenant, const std::string& id) {
  return "webhook:" + tenant + "/" + id;
}

void hold_change_log(storage::write_txn& tx, const storage::webhook_record& w, bool exists) {
  if (exists && w.enabled)
    storage::acknowledge_changes(webhook_consumer(w.tenant, w.id), w.cursor)(tx);
  else
    storage::forget_consumer(webhook_consumer(w.tenant, w.id))(tx);
}

webhook_dispatcher_actor::behavior_type webhook_dispatcher(self_ptr self, config_ptr cfg) {
  accept_fault_delays(self);
  self->state.slots.emplace(cfg->concurrency);
  auto d = std::make_shared<dispatcher>(self, cfg);
  // Every durable commit that logged changes wakes the dispatcher (from the writer's thread: a
  // message only, and not to an actor that is gone).
  auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  auto listening = cfg->store->subscribe([weak](std::uint64_t seq) {
    if (auto strong = weak.lock())
      caf::anon_send(caf::actor_cast<webhook_dispatcher_actor>(strong), webhook_wake_atom_v,
                     std::min<std::uint64_t>(std::max<std::uint64_t>(seq, 1), round_now - 1));
  });
  self->attach_functor([store = cfg->store, listening, d] {
    store->unsubscribe(listening);
    d->cancel_in_flight();
  });
  // Taking the lease (another node's died or was given up) starts a round at once.
  if (cfg->leases)
    cfg->leases->on_gain([weak](const std::string& name) {
      if (name != storage::lease::webhooks) return;
      if (auto strong = weak.lock())
        caf::anon_send(caf::actor_cast<webhook_dispatcher_actor>(strong), webhook_wake_atom_v, std::uint64_t{0});
    });
  self->send(self, webhook_wake_atom_v, std::uint64_t{0});  // the first round reads every endpoint
  return {
    [d](webhook_wake_atom, std::uint64_t what) {
      // 0: a plan changed an endpoint; `round_now`: the coalesced wake; `timer_flag`: a timer; else a commit.
      if (what == 0) return d->reload();
      if (what == round_now) return d->round();
      if (what & timer_flag) return d->tick(static_cast<std::int64_t>(what & ~timer_flag));
      d->wake();
    },
    [cfg](webhook_policy_atom) { return cfg->policy; },
    [cfg](webhook_read_atom, const webhook_read_job& job) -> caf::result<bool> {
      try {
        job.run(*cfg->store, *cfg->policy);
        return true;
      } catch (const std::exception& e) {
        spdlog::error("webhooks: a read failed: {}", e.what());
        return caf::make_error(backend_error::storage_failure, "webhook read failed");
      }
    },
  };
}

}  // namespace cl::actors
