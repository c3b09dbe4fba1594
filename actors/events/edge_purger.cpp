#include "actors/events/edge_purger.hpp"
#include "actors/fault_hooks.hpp"

#include "actors/events/changes_feed.hpp"

#include "actors/interfaces.hpp"
#include "domain/clock.hpp"
#include "storage/change_log.hpp"
#include "storage/leases.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace cl::actors {

using storage::change_kind;
using storage::change_op;

edge_purge_keys purge_keys_for(const std::vector<storage::change_entry>& entries, const edge_lookups& lookups,
                               bool soft_edits) {
  std::set<std::string> hard, soft;
  auto add = [](std::set<std::string>& to, const std::string& key) {
    if (!key.empty()) to.insert(key);
  };
  auto& edits = soft_edits ? soft : hard;
  for (const auto& e : entries) {
    switch (e.kind) {
      case change_kind::resource:
        switch (e.op) {
          case change_op::promoted:
            // Staged, it had no Work; its rights are now its Work's.
            add(hard, e.id);
            if (lookups.work_of) add(hard, lookups.work_of(e.tenant, e.id));
            break;
          case change_op::granted:
          case change_op::revoked: add(hard, e.id); break;
          case change_op::created: break;  // nothing was cached under a new id (refusals never are)
          default: add(edits, e.id); break;
        }
        break;
      case change_kind::work:
        if (e.op != change_op::created) add(edits, e.id);
        break;
      case change_kind::contract:
        add(hard, e.id);
        if (lookups.works_of_contract)
          for (const auto& w : lookups.works_of_contract(e)) add(hard, w);
        break;
      case change_kind::blob: break;
      case change_kind::policy: break;  // everything is purged on outside changes (concern_handles)
    }
  }
  edge_purge_keys out;
  out.hard.assign(hard.begin(), hard.end());
  for (const auto& k : soft)
    if (!hard.count(k)) out.soft.push_back(k);
  return out;
}

std::vector<std::string> key_chunks(const std::vector<std::string>& keys, std::size_t max_bytes) {
  std::vector<std::string> out;
  std::string current;
  for (const auto& k : keys) {
    if (!current.empty() && current.size() + 1 + k.size() > max_bytes) out.push_back(std::move(current)), current.clear();
    if (!current.empty()) current += ' ';
    current += k;
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

namespace {

using state_t = edge_purger_state;
using clock = state_t::clock;
using self_t = edge_purger_actor::stateful_pointer<edge_purger_state>;

writer_actor writer_of(const edge_purger_config& cfg) {
  return cfg.directory ? cfg.directory->snapshot()->get<writer_actor>() : writer_actor{};
}

std::uint64_t outside_changes(const edge_purger_config& cfg) {
  if (!cfg.directory) return 0;
  auto handles = cfg.directory->snapshot();
  return handles->outside_changes ? handles->outside_changes->load() : 0;
}

/// Sends `keys` (and a purge of everything first when `everything`) to edge `i`, in requests of
/// at most the configured header size; false at the first that fails (purges are idempotent:
/// the whole set is sent again).
bool send(edge_purger_state& st, const edge_purger_config& cfg, std::size_t i, const edge_purge_keys& keys,
          bool everything) {
  auto one = [&](domain::purge_request r) {
    r.to = cfg.edges[i];
    r.secret = cfg.secret;
    r.timeout_ms = cfg.timeout_ms;
    auto answer = cfg.send(r);
    cfg.purges.increment();
    if (answer.error.empty()) return true;
    cfg.failures.increment();
    auto& edge = st.edges[i];
    auto now = clock::now();
    // Logged when it starts failing, then at most every `log_every` (retries are frequent).
    if (edge.failures == 0 || now - edge.logged_at >= cfg.log_every) {
      edge.logged_at = now;
      if (answer.status != 0)
        spdlog::warn("edge purge: {} answered {} ({}); retrying", cfg.edge_names[i], answer.status, answer.error);
      else
        spdlog::warn("edge purge: {} failed ({}); retrying", cfg.edge_names[i], answer.error);
    }
    return false;
  };
  if (everything) {
    domain::purge_request r;
    r.everything = true;
    if (!one(r)) return false;
  }
  for (const auto& chunk : key_chunks(keys.hard, cfg.header_bytes)) {
    domain::purge_request r;
    r.hard_keys = chunk;
    if (!one(r)) return false;
  }
  for (const auto& chunk : key_chunks(keys.soft, cfg.header_bytes)) {
    domain::purge_request r;
    r.soft_keys = chunk;
    if (!one(r)) return false;
  }
  return true;
}

/// Moves the consumer position to `position` (at most every `acknowledge_every`, or `now`).
void acknowledge(self_t self, const edge_purger_config& cfg, std::uint64_t position, bool now) {
  auto& st = self->state;
  auto at = clock::now();
  if (position == st.acknowledged && st.started) return;
  if (!now && at - st.acknowledged_at < cfg.acknowledge_every) return;
  auto writer = writer_of(cfg);
  if (!writer) return;
  st.acknowledged = position;
  st.acknowledged_at = at;
  st.started = true;
  self->request(writer, std::chrono::seconds{30}, write_atom_v, storage::acknowledge_changes(edge_purge_consumer, position))
    .then([](bool) {}, [](caf::error&) {});
}

/// One round: what is new in the log (and owed) goes to every edge that is not backing off.
/// Answers whether the round stopped at its batch bound with more to read.
bool round(self_t self, const edge_purger_config& cfg) {
  auto& st = self->state;
  auto now = clock::now();
  if (auto outside = outside_changes(cfg); outside != st.outside_seen) {
    st.outside_seen = outside;
    for (auto& e : st.edges) e.everything = true;
  }
  auto last = cfg.store->last_change();
  // Edges in backoff neither read nor hold the others back.
  std::uint64_t from = last;
  bool any_ready = false;
  for (const auto& e : st.edges)
    if (now >= e.retry_at) from = std::min(from, e.position), any_ready = true;
  std::vector<storage::change_entry> entries;
  if (any_ready && from < last) entries = cfg.store->read_from(from, cfg.batch);
  auto up_to = entries.empty() ? from : entries.back().seq;
  std::map<std::uint64_t, edge_purge_keys> keys_after;  // by an edge's position: edges usually share one
  edge_lookups lookups;
  lookups.work_of = [&cfg](const std::string& tenant, const std::string& id) {
    auto header = cfg.store->resources().header(tenant, id);
    return header ? header->work_id : std::string{};
  };
  lookups.works_of_contract = [&cfg](const storage::change_entry& e) { return works_of_contract(*cfg.store, e); };
  for (std::size_t i = 0; i < st.edges.size(); ++i) {
    auto& edge = st.edges[i];
    if (now < edge.retry_at) continue;
    bool ok = true;
    if (edge.everything) {
      ok = send(st, cfg, i, {}, true);
      if (ok) {
        edge.everything = false;
        edge.repeats.push_back({now + cfg.repeat_after, {}, true});
      }
    }
    if (ok && edge.position < up_to) {
      auto found = keys_after.find(edge.position);
      if (found == keys_after.end()) {
        std::vector<storage::change_entry> mine;
        for (const auto& c : entries)
          if (c.seq > edge.position) mine.push_back(c);
        found = keys_after.emplace(edge.position, purge_keys_for(mine, lookups, cfg.soft_edits)).first;
      }
      const auto& keys = found->second;
      ok = keys.empty() || send(st, cfg, i, keys, false);
      if (ok) {
        edge.position = up_to;
        if (!keys.empty()) edge.repeats.push_back({now + cfg.repeat_after, keys, false});
      }
    }
    while (ok && !edge.repeats.empty() && edge.repeats.front().due <= now) {
      ok = send(st, cfg, i, edge.repeats.front().keys, edge.repeats.front().everything);
      if (ok) edge.repeats.pop_front();
    }
    if (ok) {
      if (edge.failures > 0)
        spdlog::info("edge purge: {} answers again after {} failed rounds", cfg.edge_names[i], edge.failures);
      edge.failures = 0;
      edge.retry_at = {};
      continue;
    }
    if (edge.failures++ == 0) edge.failing_since = now;
    edge.retry_at = now + cfg.backoff[std::min(edge.failures, cfg.backoff.size()) - 1];
    if (now - edge.failing_since >= cfg.give_up_after && edge.position < last) {
      // It no longer holds the log back; when it answers again, everything it may hold goes.
      spdlog::warn("edge purge: {} has failed for {} s; it will be purged of everything when it answers",
                   cfg.edge_names[i],
                   std::chrono::duration_cast<std::chrono::seconds>(now - edge.failing_since).count());
      edge.position = last;
      edge.everything = true;
      edge.repeats.clear();
    }
  }
  auto held = last;
  for (const auto& e : st.edges) held = std::min(held, e.position);
  double lag = 0;
  if (held < last) {
    auto next = cfg.store->read_from(held, 1);
    if (!next.empty()) lag = std::max<double>(0, static_cast<double>(domain::now_ms() - next.front().at_ms) / 1000.0);
  }
  cfg.lag_seconds.set(lag);
  cfg.failing_edges.set(static_cast<double>(
    std::count_if(st.edges.begin(), st.edges.end(), [](const auto& e) { return e.failures > 0; })));
  acknowledge(self, cfg, held, false);
  return entries.size() >= cfg.batch && up_to < last;
}

/// Reads where the purges stand from the consumer position (at start, and when the lease is taken
/// again: another node purged meanwhile); every edge owes a purge of everything. Answers whether the
/// consumer is registered.
bool begin(self_t self, const edge_purger_config& cfg) {
  auto& st = self->state;
  auto registered = false;
  std::uint64_t start = cfg.store->last_change();
  for (const auto& c : cfg.store->consumers())
    if (c.name == edge_purge_consumer) start = std::min(start, c.applied), registered = true;
  st.outside_seen = outside_changes(cfg);
  st.edges.assign(cfg.edges.size(), {});
  for (auto& e : st.edges) e.position = start;
  st.acknowledged = start;
  st.started = false;
  return registered;
}

}  // namespace

edge_purger_actor::behavior_type edge_purger(edge_purger_actor::stateful_pointer<edge_purger_state> self,
                                             std::shared_ptr<const edge_purger_config> cfg) {
  accept_fault_delays(self);
  auto& st = self->state;
  st.term = cfg->leases ? cfg->leases->term(storage::lease::edge_purge) : 0;
  auto registered = begin(self, *cfg);
  if (cfg->edges.empty()) {
    // No edge: a position kept from an earlier configuration must not hold the log.
    if (registered) self->send(self, edge_purge_atom_v, std::uint64_t{0});
    return {
      [self, cfg](edge_purge_atom, std::uint64_t) {
        auto retry = [self] { self->delayed_send(self, std::chrono::seconds{1}, edge_purge_atom_v, std::uint64_t{0}); };
        auto writer = writer_of(*cfg);
        if (!writer) return retry();
        self->request(writer, std::chrono::seconds{30}, write_atom_v, storage::forget_consumer(edge_purge_consumer))
          .then([](bool) {}, [retry](caf::error&) { retry(); });
      },
    };
  }
  acknowledge(self, *cfg, st.acknowledged, true);
  // A commit that logged changes wakes the purger at once (from the writer's thread: a message
  // only, and not to an actor that is gone); the timer covers everything else (backoff, repeats,
  // outside changes).
  auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
  auto listening = cfg->store->subscribe([weak](std::uint64_t seq) {
    if (auto strong = weak.lock())
      caf::anon_send(caf::actor_cast<edge_purger_actor>(strong), edge_purge_atom_v, std::max<std::uint64_t>(seq, 1));
  });
  self->attach_functor([store = cfg->store, listening] { store->unsubscribe(listening); });
  self->send(self, edge_purge_atom_v, std::uint64_t{0});
  return {
    [self, cfg](edge_purge_atom, std::uint64_t woken_by) {
      auto& st = self->state;
      if (cfg->leases) {
        // Another node purges while it holds the lease; taken again, this node starts afresh.
        auto term = cfg->leases->term(storage::lease::edge_purge);
        if (term == 0) {
          st.term = 0;
          if (woken_by == 0) self->delayed_send(self, cfg->interval, edge_purge_atom_v, std::uint64_t{0});
          return;
        }
        if (term != st.term) {
          try {
            begin(self, *cfg);
          } catch (const std::exception& e) {
            spdlog::error("edge purge: cannot read the consumer position: {}", e.what());
            if (woken_by == 0) self->delayed_send(self, cfg->interval, edge_purge_atom_v, std::uint64_t{0});
            return;
          }
          st.term = term;
        }
      }
      if (!st.started) acknowledge(self, *cfg, st.acknowledged, true);
      // A wake for changes every ready edge has purged already costs nothing.
      if (woken_by != 0) {
        auto now = edge_purger_state::clock::now();
        bool behind = false;
        for (const auto& e : st.edges) behind = behind || (now >= e.retry_at && e.position < woken_by);
        if (!behind) return;
      }
      bool more = false;
      try {
        more = round(self, *cfg);
      } catch (const std::exception& e) {
        spdlog::error("edge purge: a round failed: {}", e.what());
      }
      // One timer at a time: only the timer's own round sets the next one.
      if (more) self->send(self, edge_purge_atom_v, cfg->store->last_change());
      if (woken_by == 0) self->delayed_send(self, cfg->interval, edge_purge_atom_v, std::uint64_t{0});
    },
  };
}

}  // namespace cl::actors
