#include "actors/ledger.hpp"
#include "actors/fault_hooks.hpp"
#include "actors/backend_error.hpp"
#include "domain/clock.hpp"
#include "storage/leases.hpp"

#include "domain/idempotency.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

namespace {


void count(const ledger_config& cfg, const char* outcome) {
  if (cfg.stats) cfg.stats->count_idempotency(outcome);
}

/// Notes that `key` has a record: it is looked up from now on (trusts_writes).
void remember(ledger_state& st, const ledger_config& cfg, const domain::ledger_key& key) {
  if (!cfg.trusts_writes || cfg.remembered_keys == 0) return;
  auto [at, added] = st.remembered.insert(key);
  if (!added) return;
  st.remembered_order.push_back(at);
  while (st.remembered_order.size() > cfg.remembered_keys) {
    st.remembered.erase(st.remembered_order.front());
    st.remembered_order.pop_front();
  }
}

/// What is stored under `key` in committed state, for a request with `fingerprint`.
ledger_verdict stored_under(const ledger_config& cfg, ledger_state& st, const domain::ledger_key& key,
                            const std::string& fingerprint) {
  auto found = domain::look_up(cfg.store->ledger().record(key), fingerprint, cfg.retention_ms, domain::now_ms());
  if (found.kind == domain::ledger_lookup::mismatch) {
    remember(st, cfg, key);
    return ledger_verdict{ledger_verdict::mismatch, {}};
  }
  if (found.kind == domain::ledger_lookup::replay) {
    remember(st, cfg, key);
    // The record is committed, and so is the write it answered: the log's head now is past it.
    return ledger_verdict{ledger_verdict::replay, std::move(found.answer), cfg.store->last_change()};
  }
  return ledger_verdict{ledger_verdict::fresh, {}};
}

}  // namespace

storage::mutation prune_ledger(std::int64_t cutoff_ms, std::size_t limit) {
  return [cutoff_ms, limit](storage::write_txn& tx) {
    tx.ledger().prune(cutoff_ms, limit);
    return true;
  };
}

ledger_actor::behavior_type ledger(ledger_actor::stateful_pointer<ledger_state> self,
                                   std::shared_ptr<const ledger_config> cfg) {
  accept_fault_delays(self);
  self->delayed_send(self, std::chrono::milliseconds{0}, prune_atom_v);
  return {
    [self, cfg](begin_atom, const domain::ledger_key& key, const std::string& fingerprint,
                bool only_effect_is_write) -> caf::result<ledger_verdict> {
      try {
        auto now = std::chrono::steady_clock::now();
        auto& st = self->state;
        if (auto h = st.held.find(key); h != st.held.end()) {
          if (h->second > now) {
            count(*cfg, "in_use");
            return ledger_verdict{ledger_verdict::in_use, {}};
          }
          st.held.erase(h);  // its request never said it answered (killed at its deadline)
        }
        if (cfg->trusts_writes && only_effect_is_write && st.remembered.count(key) == 0) {
          st.held.emplace(key, now + cfg->hold);
          return ledger_verdict{ledger_verdict::unchecked, {}};
        }
        auto verdict = stored_under(*cfg, st, key, fingerprint);
        if (verdict.kind == ledger_verdict::mismatch) count(*cfg, "mismatch");
        if (verdict.kind == ledger_verdict::replay) count(*cfg, "replay");
        if (verdict.kind == ledger_verdict::fresh) st.held.emplace(key, now + cfg->hold);
        return verdict;
      } catch (const std::exception& e) {
        return storage_error("ledger", e);
      }
    },
    [self, cfg](check_atom, const domain::ledger_key& key, const std::string& fingerprint) -> caf::result<ledger_verdict> {
      try {
        return stored_under(*cfg, self->state, key, fingerprint);
      } catch (const std::exception& e) {
        return storage_error("ledger", e);
      }
    },
    [self, cfg](release_atom, const domain::ledger_key& key, int settled) {
      self->state.held.erase(key);
      if (settled == unsettled) return;
      remember(self->state, *cfg, key);
      // A replay or mismatch found by the write (a key another node stored first, or one not
      // looked up) is counted here; one found by `begin` was counted there and is not released.
      if (settled == replayed) count(*cfg, "replay");
      if (settled == mismatched) count(*cfg, "mismatch");
    },
    [self, cfg](prune_atom) {
      try {
        auto now = std::chrono::steady_clock::now();
        for (auto i = self->state.held.begin(); i != self->state.held.end();)
          i = i->second <= now ? self->state.held.erase(i) : std::next(i);
        if (!cfg->prunes) {
          self->delayed_send(self, cfg->prune_interval, prune_atom_v);
          return;
        }
        // Only when the oldest record is past retention: no empty transaction (and fsync) per tick.
        auto cutoff = domain::now_ms() - cfg->retention_ms;
        bool due = (!cfg->leases || cfg->leases->holds(storage::lease::pruning)) && cfg->store->ledger().prune_due(cutoff);
        auto writer = cfg->directory ? cfg->directory->snapshot()->get<writer_actor>() : writer_actor{};
        if (due && writer)
          self->request(writer, std::chrono::seconds{30}, write_atom_v, prune_ledger(cutoff, 1000))
            .then([cfg](bool) { if (cfg->stats) cfg->stats->set_ledger_entries(cfg->store->ledger().records()); },
                  [](caf::error&) {});
        else if (cfg->stats)
          cfg->stats->set_ledger_entries(cfg->store->ledger().records());
        // The store's size for capacity alerts, on the same tick.
        if (cfg->stats) {
          auto [used, limit] = cfg->store->space();
          cfg->stats->set_storage_space(used, limit);
        }
      } catch (const std::exception& e) {
        spdlog::error("ledger: pruning failed: {}", e.what());
      }
      self->delayed_send(self, cfg->prune_interval, prune_atom_v);
    },
  };
}

ledger_actor::behavior_type ledger_shards(ledger_actor::pointer self, std::vector<ledger_actor> shards) {
  accept_fault_delays(self);  // a delay holds every message of the front (the whole concern)
  for (const auto& shard : shards) self->link_to(shard);
  auto of = [shards](const domain::ledger_key& key) {
    std::hash<std::string> h;
    return shards[(h(key.tenant) ^ (h(key.client_id) * 31) ^ (h(key.key) * 131)) % shards.size()];
  };
  return {
    [self, of](begin_atom, const domain::ledger_key& key, const std::string& fingerprint,
               bool only_effect_is_write) -> caf::result<ledger_verdict> {
      return self->delegate(of(key), begin_atom_v, key, fingerprint, only_effect_is_write);
    },
    [self, of](check_atom, const domain::ledger_key& key, const std::string& fingerprint) -> caf::result<ledger_verdict> {
      return self->delegate(of(key), check_atom_v, key, fingerprint);
    },
    [self, of](release_atom, const domain::ledger_key& key, int settled) {
      self->send(of(key), release_atom_v, key, settled);
    },
    [](prune_atom) {},
  };
}

}  // namespace cl::actors
