#include "actors/writer.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

writer_actor::behavior_type writer(writer_actor::stateful_pointer<writer_state> self,
                                   std::shared_ptr<storage::record_store> store, std::shared_ptr<writer_stats> stats) {
  return {
    [self](write_atom, storage::mutation& m) -> caf::result<bool> {
      auto& st = self->state;
      auto rp = self->make_response_promise<bool>();
      st.pending.emplace_back(std::move(m), rp);
      // Everything already in the mailbox is ahead of this flush message: it joins the group.
      if (!st.flush_scheduled) {
        st.flush_scheduled = true;
        self->send(self, flush_atom_v);
      }
      return rp;
    },
    [self, store, stats](flush_atom) {
      auto& st = self->state;
      st.flush_scheduled = false;
      auto group = std::move(st.pending);
      st.pending.clear();
      if (group.empty()) return;
      std::vector<storage::mutation> batch;
      batch.reserve(group.size());
      for (auto& [m, rp] : group) batch.push_back(std::move(m));
      try {
        auto kept = store->apply(batch);
        if (stats) {
          ++stats->groups;
          stats->mutations += group.size();
        }
        for (std::size_t i = 0; i < group.size(); ++i) group[i].second.deliver(static_cast<bool>(kept[i]));
      } catch (const std::exception& e) {
        // Nothing of the group is stored; every requester learns it (503 upstream).
        spdlog::error("writer: group commit of {} mutation(s) failed: {}", group.size(), e.what());
        for (auto& [m, rp] : group) rp.deliver(caf::make_error(caf::sec::runtime_error, "commit failed"));
      }
    },
  };
}

}  // namespace cl::actors
