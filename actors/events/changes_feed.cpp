// How long polls and event streams are held (docs/architecture.md, "Events: the change feed"):
//
// - **Long polls and streams are held, and limited.** They wait in the feed actor, woken by the
//   record store's commit listener (coalesced: at most once per 10 ms). Each holds a slot of
//   `held_requests` (per principal, per client, and in all at most half the connection cap; on
//   PostgreSQL the first two are counted in the database, so they hold across nodes); the slot
//   goes back when the answer is written or the client leaves (the session watches the socket; the
//   feed drops a waiting poll whose client left within a quarter of a second). An event stream is a
//   chain of long polls written as they come (`api_reply::next_chunk_async`) and ends after
//   `changes.stream_seconds`, at its token's `exp` (with `event: token_expired`), or when the
//   service drains.

#include "actors/events/changes_feed.hpp"
#include "actors/fault_hooks.hpp"

#include "actors/backend_error.hpp"
#include "actors/rights.hpp"
#include "domain/clock.hpp"
#include "domain/odrl.hpp"
#include "domain/json_text.hpp"
#include "domain/layer3.hpp"
#include "domain/records.hpp"

#include <boost/json.hpp>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace cl::actors {

namespace {

using storage::change_kind;
using storage::change_op;

/// Commits within this of the first wake the waiting polls together.
constexpr std::chrono::milliseconds wake_batch{10};

/// How often waiting polls look whether the service drains or their client left (id 0 of `expire_atom`).
constexpr std::chrono::milliseconds drain_check{250};

/// Polls taken off the waiting list, with their answers: delivered only after the list and its
/// gauge say they are gone (a client that has its answer sees neither its slot nor its wait).
using answers = std::vector<std::pair<caf::typed_response_promise<changes_page>, changes_page>>;

void deliver(answers& ready) {
  for (auto& [promise, page] : ready) promise.deliver(std::move(page));
  ready.clear();
}

/// The event an entry is for `principal_set`, if any: its type, or nothing (a change the feed does
/// not name, such as another principal's grant).
std::optional<std::string> type_of(const storage::change_entry& e, const std::vector<std::string>& principals) {
  auto mine = [&] { return std::find(principals.begin(), principals.end(), e.principal) != principals.end(); };
  if (e.kind == change_kind::work) {
    if (e.op == change_op::created) return "work.created";
    if (e.op == change_op::replaced || e.op == change_op::patched) return "work.updated";
    return std::nullopt;
  }
  if (e.kind != change_kind::resource) return std::nullopt;  // contracts and blobs: not (yet) feed events
  switch (e.op) {
    case change_op::created: return "resource.created";
    case change_op::replaced:
    case change_op::patched: return "resource.updated";
    case change_op::snapshotted: return "resource.version_created";
    case change_op::promoted: return "resource.promoted";
    case change_op::granted: return mine() ? std::optional<std::string>{"resource.appeared"} : std::nullopt;
    case change_op::revoked: return mine() ? std::optional<std::string>{"resource.disappeared"} : std::nullopt;
    default: return std::nullopt;
  }
}

changes_page refused(domain::error_id id, std::string message, std::string detail) {
  changes_page p;
  p.error = domain::api_error{id, std::move(message), {{"since", std::move(detail)}}};
  return p;
}

}  // namespace

std::vector<std::string> works_of_contract(const storage::record_store& store, const storage::change_entry& e) {
  std::vector<std::string> works;
  std::int64_t version = 0;
  try {
    version = e.version.empty() ? 0 : std::stoll(e.version);
  } catch (const std::exception&) {
    version = 0;
  }
  auto add = [&](const std::optional<std::string>& record) {
    if (!record) return;
    auto parsed = boost::json::parse(*record);
    if (auto* ids = parsed.as_object().if_contains("work_ids"); ids && ids->is_array())
      for (const auto& w : ids->as_array())
        if (w.is_string()) works.emplace_back(w.as_string());
  };
  const auto& contracts = store.contracts();
  if (version > 0) {
    add(contracts.version(e.tenant, e.id, version));
    if (version > 1) add(contracts.version(e.tenant, e.id, version - 1));
  } else {
    add(contracts.latest(e.tenant, e.id));  // an entry logged before versions were recorded in it
  }
  std::sort(works.begin(), works.end());
  works.erase(std::unique(works.begin(), works.end()), works.end());
  return works;
}

namespace {

/// What one fan-out step reached: its events (their `within`), whether the entry is done, where
/// it stopped otherwise.
struct fan_out_step {
  bool done = true;
  std::string within;
};

/// The `resource.rights_changed` events of contract or policy entry `e` for a reader of `tenant`,
/// from `within` ("<work>\n<last Resource id>"), at most `room` of them and `*budget` Resources
/// examined. A contract moves the rights of its Works' Resources; the policy those of every
/// Resource of the tenant (one walk over what the reader may read, the "work" being empty).
fan_out_step fan_out(const storage::record_store& store, const domain::feed_cursor_codec& ids,
                     const storage::change_entry& e, const std::string& tenant,
                     const std::vector<std::string>& principals, const std::string& within, std::size_t room,
                     std::size_t* budget, std::vector<change_event>& out) {
  auto cut = within.find('\n');
  std::string from_work = within.substr(0, cut), after = cut == std::string::npos ? "" : within.substr(cut + 1);
  bool policy = e.kind == change_kind::policy;
  auto works = policy ? std::vector<std::string>{""} : works_of_contract(store, e);
  for (const auto& work : works) {
    if (!within.empty() && work < from_work) continue;
    std::string resume = work == from_work ? after : "";
    for (;;) {
      if (room == 0 || *budget == 0) return {false, work + '\n' + resume};
      storage::resource_query q;
      q.tenant = tenant;
      q.readable_by = principals;
      q.work_id = work;
      q.after = resume;
      q.limit = room;
      q.budget = *budget;
      auto page = store.resources().list(q);
      *budget -= std::min(*budget, std::max<std::size_t>(page.examined, 1));
      for (const auto& [id, record] : page.entries) {
        change_event ev;
        ev.id = ids.event_id(tenant, e.seq, id);
        ev.type = "resource.rights_changed";
        ev.subject = "resource_id";
        ev.subject_id = id;
        (policy ? ev.policy_version : ev.contract_id) = e.id;
        ev.at_ms = e.at_ms;
        ev.seq = e.seq;
        ev.within = work + '\n' + id;
        if (e.transaction != 0) ev.transaction = "txn_" + ids.event_id(tenant, e.transaction).substr(4);
        out.push_back(std::move(ev));
        --room;
      }
      resume = page.entries.empty() ? page.resume_after : page.entries.back().first;
      if (!page.resume_after.empty() && page.resume_after > resume) resume = page.resume_after;
      if (page.exhausted) break;
    }
  }
  return {};
}

}  // namespace

domain::api_error held_requests::over_limit(bool principal, std::size_t limit) {
  return domain::api_error{
    domain::error_id::too_many_held_requests,
    std::string{principal ? "This principal" : "This client"} + " already holds " + std::to_string(limit)
      + " event streams and long polls of the change feed; close one first.",
    {{principal ? "principal" : "client_id", "at most " + std::to_string(limit) + " held at once"}}};
}

std::shared_ptr<const void> held_requests::acquire(const std::string& holder, const std::string& client,
                                                   std::optional<domain::api_error>* refusal) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (total_ >= limits_.total) {
      *refusal = domain::api_error{domain::error_id::server_overloaded,
                                   "Too many event streams and long polls are open; retry shortly.", {}};
      return nullptr;
    }
    auto over = [](const std::map<std::string, std::size_t>& counts, const std::string& key, std::size_t limit) {
      auto it = counts.find(key);
      return it != counts.end() && it->second >= limit;
    };
    // This node's own count refuses at once; the shared one (every node's) is asked next.
    bool principal = over(by_holder_, holder, limits_.per_principal);
    if (principal || over(by_client_, client, limits_.per_client)) {
      *refusal = over_limit(principal, principal ? limits_.per_principal : limits_.per_client);
      return nullptr;
    }
    ++by_holder_[holder];
    ++by_client_[client];
    count_.set(static_cast<double>(++total_));
  }
  std::optional<std::uint64_t> slot;
  if (shared_) {
    auto why = storage::held_slot_store::full::none;
    try {
      slot = shared_->take(holder, client, limits_.per_principal, limits_.per_client, &why);
    } catch (...) {
      release(holder, client);
      throw;
    }
    if (!slot) {
      release(holder, client);
      bool principal = why == storage::held_slot_store::full::holder;
      *refusal = over_limit(principal, principal ? limits_.per_principal : limits_.per_client);
      return nullptr;
    }
  }
  // The slot is a token whose deleter gives it back (it keeps the registry alive meanwhile).
  auto self = shared_from_this();
  return std::shared_ptr<const void>(static_cast<const void*>(this), [self, holder, client, slot](const void*) {
    self->release(holder, client);
    if (slot) self->shared_->give_back(*slot);
  });
}

void held_requests::release(const std::string& holder, const std::string& client) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto drop = [](std::map<std::string, std::size_t>& counts, const std::string& key) {
    auto it = counts.find(key);
    if (it != counts.end() && --it->second == 0) counts.erase(it);
  };
  drop(by_holder_, holder);
  drop(by_client_, client);
  count_.set(static_cast<double>(--total_));
}

const std::vector<std::string>& change_event_types() {
  static const std::vector<std::string> types = {
    "resource.created",     "resource.updated",     "resource.version_created", "resource.promoted",
    "resource.appeared",    "resource.disappeared", "resource.rights_changed",  "work.created",
    "work.updated",
  };
  return types;
}

change_scan scan_changes(const storage::record_store& store, const domain::feed_cursor_codec& ids,
                         const std::string& tenant, const std::vector<std::string>& principals,
                         const std::vector<std::string>& types, std::uint64_t after, const std::string& within,
                         std::size_t scan_limit, std::size_t max_events, const domain::platform_policy& policy) {
  change_scan scan;
  std::map<std::string, bool> shown;  // by Work: its rights allow a plain read now
  scan.position = after;
  auto last = store.last_change();
  auto entries = after < last ? store.read_from(after, scan_limit) : std::vector<storage::change_entry>{};
  // Sequences are dense: a first entry past `after + 1`, or none while the log is ahead, means
  // retention trimmed what followed the cursor.
  if (after > last || (after < last && (entries.empty() || entries.front().seq != after + 1))) {
    scan.expired = true;
    return scan;
  }
  auto wanted = [&](const std::string& type) {
    return types.empty() || std::find(types.begin(), types.end(), type) != types.end();
  };
  std::size_t budget = scan_limit;  // Resources a contract's fan-out may examine in this read
  bool stopped_inside = false;
  // Layer 2 and the hash rule for the page's Resources at once: a read each, not one per entry.
  std::vector<std::string> resource_ids;
  for (const auto& e : entries)
    if (e.tenant == tenant && e.kind == change_kind::resource) resource_ids.push_back(e.id);
  auto readable_ids = store.grants().readable_among(tenant, principals, resource_ids);
  std::optional<std::map<std::string, std::string>> works;  // read when a hash is first to be shown
  auto shown_for = [&](const std::string& id) {
    if (!works) works = store.resources().works_of(tenant, resource_ids);
    auto w = works->find(id);
    return w != works->end() && work_shown(store, policy, tenant, w->second, shown);  // gone: nothing to show
  };
  for (const auto& e : entries) {
    if (scan.events.size() >= max_events) break;
    bool moves_rights = (e.tenant == tenant && e.kind == change_kind::contract) || e.kind == change_kind::policy;
    if (moves_rights && wanted("resource.rights_changed")) {
      auto step = fan_out(store, ids, e, tenant, principals, e.seq == after + 1 ? within : std::string{},
                          max_events - scan.events.size(), &budget, scan.events);
      if (!step.done) {
        scan.position = e.seq - 1;
        scan.within = step.within;
        stopped_inside = true;
        break;
      }
      scan.position = e.seq;
      continue;
    }
    scan.position = e.seq;
    if (e.tenant != tenant) continue;
    auto type = type_of(e, principals);
    if (!type || !wanted(*type)) continue;
    bool resource = e.kind == change_kind::resource;
    bool readable = resource && readable_ids.count(e.id) > 0;
    // Layer 2 at delivery: a Resource event only while the caller reads it; `disappeared` only
    // once it no longer does (a grant through a group may still hold).
    if (resource && (*type == "resource.disappeared" ? readable : !readable)) continue;
    change_event ev;
    ev.id = ids.event_id(tenant, e.seq);
    ev.type = std::move(*type);
    ev.subject = resource ? "resource_id" : "work_id";
    ev.subject_id = e.id;
    ev.version = e.version;
    if (!e.hash.empty() && (!resource || shown_for(e.id))) ev.hash = e.hash;
    ev.at_ms = e.at_ms;
    ev.seq = e.seq;
    if (e.transaction != 0) ev.transaction = "txn_" + ids.event_id(tenant, e.transaction).substr(4);
    scan.events.push_back(std::move(ev));
  }
  scan.caught_up = !stopped_inside && scan.position >= last && (entries.empty() || scan.position == entries.back().seq);
  scan.scanned = scan.position - after;
  return scan;
}

bool work_shown(const storage::record_store& store, const domain::platform_policy& policy, const std::string& tenant,
                const std::string& work, std::map<std::string, bool>& memo) {
  auto known = memo.find(work);
  if (known != memo.end()) return known->second;
  auto rights = resolve_work(work, work.empty() ? std::vector<std::string>{} : store.contracts().for_work(tenant, work),
                             policy, domain::now_seconds());
  return memo[work] = domain::content_allowed(rights, domain::content_use{});
}

bool hash_shown(const storage::record_store& store, const domain::platform_policy& policy, const std::string& tenant,
                const std::string& id, std::map<std::string, bool>& memo) {
  auto header = store.resources().header(tenant, id);
  if (!header) return false;  // gone: nothing to show
  return work_shown(store, policy, tenant, header->work_id, memo);
}

std::string without_hash(const std::string& event) {
  auto parsed = boost::json::parse(event);
  auto* object = parsed.if_object();
  if (!object || !object->contains("hash")) return event;
  (*object)["hash"] = nullptr;
  return boost::json::serialize(parsed);
}

std::shared_ptr<const domain::platform_policy> policy_in_force(const std::shared_ptr<const policy_holder>& holder) {
  static const auto none = std::make_shared<const domain::platform_policy>();
  return holder ? holder->get() : none;
}

std::string change_event_json(const change_event& e) {
  auto text_or_null = [](const std::string& s) { return s.empty() ? std::string{"null"} : domain::json_string(s); };
  return "{\"id\":" + domain::json_string(e.id) + ",\"type\":" + domain::json_string(e.type) + ",\"" + e.subject
         + "\":" + domain::json_string(e.subject_id) + ",\"version\":" + text_or_null(e.version)
         + ",\"hash\":" + text_or_null(e.hash) + ",\"occurred_at\":" + domain::json_string(domain::iso8601_at_ms(e.at_ms))
         + ",\"transaction\":" + text_or_null(e.transaction)
         + (e.contract_id.empty() ? std::string{} : ",\"contract_id\":" + domain::json_string(e.contract_id))
         + (e.policy_version.empty() ? std::string{} : ",\"policy_version\":" + domain::json_string(e.policy_version))
         // Where the reader's new ODRL policy is (a link: the policy is the reader's own, read now).
         + (e.type == "resource.rights_changed" ? ",\"odrl_policy\":" + domain::json_string(domain::odrl_policy_path(e.subject_id))
                                                : std::string{})
         + "}";
}

changes_page read_changes(const changes_feed_config& cfg, const changes_poll& poll, bool* caught_up) {
  auto binding = domain::feed_binding(poll.types);
  std::uint64_t after = cfg.store->last_change();  // no `since`: from now
  std::string within;
  if (!poll.since.empty()) {
    domain::cursor_problem why{};
    auto opened = cfg.cursors->open(poll.since, poll.tenant, binding, &why, &within);
    // A list's `changes_cursor` opens for any types.
    if (!opened && why == domain::cursor_problem::mismatch)
      opened = cfg.cursors->open(poll.since, poll.tenant, domain::feed_binding_any(), &why, &within);
    if (!opened && why == domain::cursor_problem::mismatch)
      return refused(domain::error_id::cursor_mismatch, "The cursor was issued for another tenant or other types.",
                     "issued for another tenant or other types");
    if (!opened && why == domain::cursor_problem::restored)
      return refused(domain::error_id::cursor_expired,
                     "The data was restored from a backup after this cursor was issued: list again and follow "
                     "from the list's changes_cursor.",
                     "issued before the data was restored from a backup");
    if (!opened)
      return refused(domain::error_id::cursor_invalid, "The cursor is not one this service issued.",
                     "not a cursor of this service");
    after = *opened;
  }
  auto scan = scan_changes(*cfg.store, *cfg.cursors, poll.tenant, poll.principals, poll.types, after, within,
                           cfg.scan_limit, poll.page_size, *policy_in_force(cfg.policy));
  if (scan.expired)
    return refused(domain::error_id::cursor_expired, "The change feed no longer holds what followed this cursor.",
                   "older than the change log's retention");
  changes_page page;
  page.events = std::move(scan.events);
  if (poll.cursor_per_event)
    for (auto& ev : page.events)
      ev.cursor = ev.within.empty() ? cfg.cursors->seal({poll.tenant, binding, ev.seq})
                                    : cfg.cursors->seal({poll.tenant, binding, ev.seq - 1, ev.within});
  page.next_cursor = cfg.cursors->seal({poll.tenant, binding, scan.position, scan.within});
  page.closing = cfg.health && cfg.health->draining.load();
  page.stream_ms = cfg.stream_ms;
  if (caught_up) *caught_up = scan.caught_up;
  cfg.scanned.increment(static_cast<double>(scan.scanned));
  cfg.delivered.increment(static_cast<double>(page.events.size()));
  return page;
}

namespace {

using feed_ptr = changes_actor::stateful_pointer<changes_feed_state>;
using feed_cfg = std::shared_ptr<const changes_feed_config>;

void count_waiting(feed_ptr self, const changes_feed_config& cfg) {
  cfg.waiting.set(static_cast<double>(self->state.waiting.size()));
}

/// A slot for `poll`'s holder, or the refusal as the poll's answer (`refused`).
std::shared_ptr<const void> hold(const changes_feed_config& cfg, const changes_poll& poll, changes_page* refused) {
  if (!cfg.holds) return std::make_shared<int>(0);
  std::optional<domain::api_error> refusal;
  auto slot = cfg.holds->acquire(poll.holder, poll.client, &refusal);
  if (!slot) refused->error = std::move(refusal);
  return slot;
}

/// A poll: answered now (events, an error, a stream's first page, nothing to wait for), or held
/// until a change or its time is up.
caf::result<changes_page> on_poll(feed_ptr self, const feed_cfg& cfg, changes_poll& poll) {
  try {
    std::shared_ptr<const void> slot;
    if (poll.opens_stream) {
      changes_page refused;
      if (!(slot = hold(*cfg, poll, &refused))) return refused;
    }
    bool caught_up = false;
    auto page = read_changes(*cfg, poll, &caught_up);
    if (poll.opens_stream) {
      page.slot = std::move(slot);
      count_waiting(self, *cfg);
      return page;
    }
    if (page.error || !page.events.empty() || poll.wait_ms <= 0 || !caught_up
        || self->state.waiting.size() >= cfg->max_waiting)
      return page;
    // A long poll that will be held takes a slot; a stream's later polls hold the stream's.
    if (!poll.cursor_per_event) {
      changes_page refused;
      if (!(slot = hold(*cfg, poll, &refused))) return refused;
    }
    // Nothing for the caller yet: wait for a change, from where this read ended.
    poll.since = page.next_cursor;
    auto id = ++self->state.next_id;
    auto rp = self->make_response_promise<changes_page>();
    self->state.waiting.push_back({id, std::move(poll), rp, std::move(slot)});
    self->delayed_send(self, std::chrono::milliseconds{self->state.waiting.back().poll.wait_ms}, expire_atom_v, id);
    if (self->state.waiting.size() == 1) self->delayed_send(self, drain_check, expire_atom_v, std::uint64_t{0});
    count_waiting(self, *cfg);
    return rp;
  } catch (const std::exception& e) {
    spdlog::error("changes: the change log could not be read: {}", e.what());
    return caf::make_error(backend_error::storage_failure, "change log read failed");
  }
}

/// A commit (its sequence), or the coalesced round after commits (0): the waiting polls read on.
void on_committed(feed_ptr self, const feed_cfg& cfg, std::uint64_t seq) {
  auto& waiting = self->state.waiting;
  // Commits coalesce: the waiting polls read on at most once per `wake_batch` (a burst of
  // commits would otherwise cost every waiting poll a read per commit). Sequence 0: the round.
  if (seq != 0) {
    if (waiting.empty() || self->state.wake_pending) return;
    self->state.wake_pending = true;
    self->delayed_send(self, wake_batch, committed_atom_v, std::uint64_t{0});
    return;
  }
  self->state.wake_pending = false;
  answers ready;
  for (auto w = waiting.begin(); w != waiting.end();) {
    changes_page page;
    try {
      page = read_changes(*cfg, w->poll);
    } catch (const std::exception& e) {
      spdlog::error("changes: the change log could not be read: {}", e.what());
      ++w;
      continue;  // answered when its time is up
    }
    if (page.error || !page.events.empty()) {
      ready.emplace_back(std::move(w->answer), std::move(page));
      w = waiting.erase(w);
    } else {
      w->poll.since = page.next_cursor;  // the next read starts after what this one passed
      ++w;
    }
  }
  count_waiting(self, *cfg);
  deliver(ready);
}

/// The drain check: while the service drains, every waiting poll answers now (a stream's ends); a
/// poll whose client closed its connection ends too, and gives its slot back.
void drain_checked(feed_ptr self, const feed_cfg& cfg) {
  auto& waiting = self->state.waiting;
  bool draining = cfg->health && cfg->health->draining.load();
  answers ready;
  for (auto w = waiting.begin(); w != waiting.end();) {
    bool gone = w->poll.peer_gone && w->poll.peer_gone->load();
    if (!draining && !gone) {
      ++w;
      continue;
    }
    changes_page page;
    page.next_cursor = w->poll.since;
    page.closing = true;
    ready.emplace_back(std::move(w->answer), std::move(page));
    w = waiting.erase(w);
  }
  if (!waiting.empty()) self->delayed_send(self, drain_check, expire_atom_v, std::uint64_t{0});
  count_waiting(self, *cfg);
  deliver(ready);
}

/// Poll `id`'s time is up (0: the drain check): it answers with what there is now.
void on_expire(feed_ptr self, const feed_cfg& cfg, std::uint64_t id) {
  if (id == 0) return drain_checked(self, cfg);
  auto& waiting = self->state.waiting;
  auto w = std::find_if(waiting.begin(), waiting.end(), [id](const auto& x) { return x.id == id; });
  if (w == waiting.end()) return;  // answered by a change already
  changes_page page;
  try {
    page = read_changes(*cfg, w->poll);
  } catch (const std::exception&) {
    page.next_cursor = w->poll.since;  // nothing new read: where it was
  }
  auto answer = std::move(w->answer);
  waiting.erase(w);
  count_waiting(self, *cfg);
  answer.deliver(std::move(page));
}

}  // namespace

changes_actor::behavior_type changes_feed(changes_actor::stateful_pointer<changes_feed_state> self,
                                          std::shared_ptr<const changes_feed_config> cfg) {
  accept_fault_delays(self);
  // Every durable commit that logged changes wakes the waiting polls (the listener runs on the
  // writer's thread: it only sends a message, and not to an actor that is gone).
  auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  auto listening = cfg->store->subscribe([weak](std::uint64_t seq) {
    if (auto strong = weak.lock()) caf::anon_send(caf::actor_cast<changes_actor>(strong), committed_atom_v, seq);
  });
  self->attach_functor([store = cfg->store, listening] { store->unsubscribe(listening); });
  // Stopped (the service stops, the supervisor's exit): every waiting poll answers now, as when the
  // service drains, so no stream or long poll waits on an actor that is gone (a stopping service
  // would wait for them).
  self->set_exit_handler([self](caf::exit_msg& em) {
    for (auto& w : self->state.waiting) {
      changes_page page;
      page.next_cursor = w.poll.since;
      page.closing = true;
      w.answer.deliver(std::move(page));
    }
    self->state.waiting.clear();
    self->quit(em.reason);
  });
  return {
    [self, cfg](changes_atom, changes_poll& poll) -> caf::result<changes_page> { return on_poll(self, cfg, poll); },
    [self, cfg](committed_atom, std::uint64_t seq) { on_committed(self, cfg, seq); },
    [self, cfg](expire_atom, std::uint64_t id) { on_expire(self, cfg, id); },
  };
}

}  // namespace cl::actors
