#include "actors/writer.hpp"
#include "actors/fault_hooks.hpp"
#include "actors/backend_error.hpp"

#include "domain/clock.hpp"
#include "storage/leases.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

namespace {

/// Commits `group` as one transaction and answers every requester.
void commit(writer_state& st, const writer_config& cfg,
            std::vector<std::pair<storage::mutation, caf::typed_response_promise<bool>>>& group) {
  std::vector<storage::mutation> batch;
  batch.reserve(group.size());
  for (auto& [m, rp] : group) batch.push_back(std::move(m));
  try {
    auto kept = cfg.store->apply(batch);
    if (cfg.stats) {
      ++cfg.stats->groups;
      cfg.stats->mutations += group.size();
    }
    for (std::size_t i = 0; i < group.size(); ++i) group[i].second.deliver(static_cast<bool>(kept[i]));
  } catch (const storage::store_full& e) {
    // No room: nothing of the group is stored; every requester learns it (507 upstream). Reads go on.
    spdlog::error("writer: the store is full (raise storage.map_size_mib and restart): group of {} mutation(s) "
                  "not stored: {}", group.size(), e.what());
    for (auto& [m, rp] : group) rp.deliver(caf::make_error(backend_error::storage_full, "store full"));
  } catch (const std::exception& e) {
    // Nothing of the group is stored; every requester learns it (503 upstream).
    spdlog::error("writer: group commit of {} mutation(s) failed: {}", group.size(), e.what());
    for (auto& [m, rp] : group) rp.deliver(caf::make_error(backend_error::storage_failure, "commit failed"));
  }
}

/// Removes change-log entries past retention that every consumer has applied. Its own transaction,
/// and only when the oldest entry is old enough: no fsync for nothing.
void prune_change_log(const writer_config& cfg) {
  if (cfg.leases && !cfg.leases->holds(storage::lease::pruning)) return;
  try {
    auto cutoff = domain::now_ms() - cfg.change_log_retention.count();
    auto oldest = cfg.store->read_from(0, 1);
    if (oldest.empty() || oldest.front().at_ms >= cutoff) return;
    cfg.store->apply({storage::prune_changes(cutoff, 1000)});
  } catch (const std::exception& e) {
    spdlog::error("writer: change-log pruning failed: {}", e.what());
  }
}

}  // namespace

writer_actor::behavior_type writer(writer_actor::stateful_pointer<writer_state> self,
                                   std::shared_ptr<const writer_config> cfg) {
  accept_fault_delays(self);
  if (cfg->prunes) self->delayed_send(self, cfg->change_log_prune_interval, prune_atom_v);
  return {
    [self, cfg](write_atom, storage::mutation& m) -> caf::result<bool> {
      auto& st = self->state;
      auto rp = self->make_response_promise<bool>();
      st.pending.emplace_back(std::move(m), rp);
      if (!cfg->group_commit) {
        auto one = std::move(st.pending);
        st.pending.clear();
        commit(st, *cfg, one);
        return rp;
      }
      // Everything already in the mailbox is ahead of this flush message: it joins the group.
      if (!st.flush_scheduled) {
        st.flush_scheduled = true;
        self->send(self, flush_atom_v);
      }
      return rp;
    },
    [self, cfg](flush_atom) {
      auto& st = self->state;
      st.flush_scheduled = false;
      auto group = std::move(st.pending);
      st.pending.clear();
      if (!group.empty()) commit(st, *cfg, group);
    },
    [self, cfg](prune_atom) {
      prune_change_log(*cfg);
      self->delayed_send(self, cfg->change_log_prune_interval, prune_atom_v);
    },
  };
}

writer_actor::behavior_type writer_lanes(writer_actor::pointer self, std::vector<writer_actor> lanes) {
  for (const auto& lane : lanes) self->link_to(lane);
  accept_fault_delays(self);  // a delay holds every message of the front (the whole concern)
  return {
    [self, lanes](write_atom, storage::mutation& m) -> caf::result<bool> {
      const auto& sender = self->current_sender();
      auto lane = sender ? sender->id() % lanes.size() : 0;
      return self->delegate(lanes[lane], write_atom_v, std::move(m));
    },
    [](flush_atom) {},
    [](prune_atom) {},
  };
}

}  // namespace cl::actors
