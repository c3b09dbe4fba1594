#pragma once
/// A component that does blocking work on a timer (the change-log follower, the record store's
/// readiness probe, the lease keeper, the rate limit's sharing, the held slots' keep-alive) as a
/// supervised actor instead of a thread of its own: detached (its waits on the database hold its
/// own thread, never a scheduler's), restarted by the supervisor like every actor, and killable by
/// the fault injector (`admin.fault_injection`) by its name.

#include "actors/interfaces.hpp"
#include "actors/supervisor.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <functional>

namespace cl::actors {

/// Ticks: `recheck` runs the component's round, then schedules the next.
using ticker_actor = caf::typed_actor<caf::reacts_to<recheck_atom>>;

struct ticker_state {
  static constexpr const char* name = "ticker";
  bool failing = false;  ///< the last round threw (logged once per streak)
};

/// One round of a component's work; answers how long until the next. An exception is logged (once
/// until a round succeeds again) and the round is tried again after `retry`.
using tick_fn = std::function<std::chrono::milliseconds()>;

/// The ticker's behavior: the first round at once, each next when the previous one says.
ticker_actor::behavior_type ticker(ticker_actor::stateful_pointer<ticker_state> self, std::string name, tick_fn tick,
                                   std::chrono::milliseconds retry);

/// How the supervisor (re)starts the ticker `name`: a detached actor running `tick`.
child_spec supervised_ticker(std::string name, tick_fn tick,
                             std::chrono::milliseconds retry = std::chrono::milliseconds{1000});

}  // namespace cl::actors
