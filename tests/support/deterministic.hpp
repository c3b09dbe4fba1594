#pragma once
/// An actor system on CAF's deterministic scheduler (`test_coordinator`), for the tests of one
/// actor's protocol under tests/actors/: a message in, the answers and the state out, no sockets,
/// no waiting. Actors spawned detached run on threads of their own, outside it: such tests keep
/// to what the actor answers itself.

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <catch2/catch.hpp>

#include <memory>
#include <optional>

namespace cl::testing {

struct deterministic {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;

  deterministic() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }

  /// Asks `to`, runs until nothing is left to run, and returns the answer (fails the test on an
  /// error or on no answer).
  template <class Answer, class Handle, class... Ts>
  Answer ask(const Handle& to, Ts... xs) {
    caf::scoped_actor self{*sys};
    std::optional<Answer> out;
    auto h = self->request(to, caf::infinite, xs...);
    sched->run();
    h.receive([&](Answer& a) { out = std::move(a); },
              [](caf::error& e) { FAIL("the actor answered an error: " << to_string(e)); });
    REQUIRE(out);
    return *out;
  }

  /// Ends `to` and runs what its end sets off.
  template <class Handle>
  void kill(const Handle& to) {
    if (!to) return;
    caf::anon_send_exit(to, caf::exit_reason::kill);
    sched->run();
  }
};

}  // namespace cl::testing
