#pragma once
/// The supervisor: starts the concern actors, restarts a crashed one (one-for-one) and gives up,
/// stopping the process non-zero, when restarts exceed the configured intensity (OTP-style).

#include "actors/directory.hpp"
#include "actors/metrics.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/stateful_actor.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cl::actors {

/// How to (re)start one child and where to publish its handle.
struct child_spec {
  std::string name;
  std::function<caf::actor(caf::actor_system&)> start;
  std::function<void(actor_directory&, const caf::actor&)> publish;
};

struct supervisor_config {
  std::vector<child_spec> children;
  int max_restarts = 5;                 ///< within `window`; one more and the supervisor gives up
  std::chrono::seconds window{10};
  std::shared_ptr<actor_directory> directory;
  std::shared_ptr<metrics> stats;
  std::shared_ptr<service_health> health;
  std::function<void(const std::string&)> give_up;  ///< called once, with the reason
};

/// Empty when `cfg` is usable, otherwise what is wrong with it.
std::optional<std::string> validate(const supervisor_config& cfg);

struct supervisor_state {
  static constexpr const char* name = "supervisor";
  std::vector<caf::actor> running;                         ///< by child index
  std::deque<std::chrono::steady_clock::time_point> restarts;  ///< within the window
  bool given_up = false;
};

/// The supervisor's behavior; it spawns every child before returning.
caf::behavior supervisor(caf::stateful_actor<supervisor_state>* self, std::shared_ptr<const supervisor_config> cfg);

}  // namespace cl::actors
