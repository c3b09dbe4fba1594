#include "actors/ticker.hpp"

#include "actors/fault_hooks.hpp"
#include "actors/supervisor.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

ticker_actor::behavior_type ticker(ticker_actor::stateful_pointer<ticker_state> self, std::string name, tick_fn tick,
                                   std::chrono::milliseconds retry) {
  accept_fault_delays(self);
  self->send(self, recheck_atom_v);
  return {
    [self, name = std::move(name), tick = std::move(tick), retry](recheck_atom) {
      auto next = retry;
      try {
        next = tick();
        if (std::exchange(self->state.failing, false)) spdlog::info("{}: working again", name);
      } catch (const std::exception& e) {
        if (!std::exchange(self->state.failing, true))
          spdlog::warn("{}: {}; trying again every {} ms", name, e.what(), retry.count());
      }
      self->delayed_send(self, next.count() > 0 ? next : retry, recheck_atom_v);
    },
  };
}

child_spec supervised_ticker(std::string name, tick_fn tick, std::chrono::milliseconds retry) {
  return supervised<ticker_actor>(name, [name, tick = std::move(tick), retry](caf::actor_system& sys) {
    return sys.spawn<caf::detached>(ticker, name, tick, retry);
  });
}

}  // namespace cl::actors
