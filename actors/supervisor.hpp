#pragma once
/// The supervisor: starts the concern actors, restarts a crashed one (one-for-one) and gives up,
/// stopping the process non-zero, when restarts exceed the configured intensity (OTP-style).

#include "actors/directory.hpp"
#include "actors/fault_hooks.hpp"
#include "actors/metrics.hpp"
#include "actors/type_ids.hpp"

#include <caf/actor_addr.hpp>
#include <caf/local_actor.hpp>
#include <caf/fwd.hpp>
#include <caf/stateful_actor.hpp>

#include <any>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/// `(fault_kill_atom, name)` to the supervisor: kills its child `name` (fault injection); it is
/// restarted as after any crash. `(fault_delay_atom, name, ms)`: `name` holds its next messages
/// for `ms` (see fault_hooks.hpp).
CAF_ADD_ATOM(contentlake, cl::actors, fault_kill_atom, "faultkill")

namespace cl::actors {

/// A started child: its address (down messages name it) and its typed handle, kept so the child
/// lives while the supervisor does even when the directory's view of it is replaced.
struct running_child {
  caf::actor_addr address;
  std::any handle;
};

/// How to (re)start one child: spawn it, have `supervisor` monitor it, publish its typed handle
/// in the directory. Built by `supervised` (never by hand).
struct child_spec {
  std::string name;
  std::function<running_child(caf::local_actor& supervisor, actor_directory&)> start;
};

/// A child of mailbox type `Handle` that `spawn` (re)starts. With `instance`, the child is one of
/// several of its kind (the readers) and is published in that directory view only.
template <class Handle>
child_spec supervised(std::string name, std::function<Handle(caf::actor_system&)> spawn,
                      std::optional<std::size_t> instance = std::nullopt) {
  return {std::move(name), [spawn = std::move(spawn), instance](caf::local_actor& self, actor_directory& directory) {
            Handle child = spawn(self.system());
            self.monitor(child);
            if (instance) directory.publish(*instance, child);
            else directory.publish(child);
            return running_child{child.address(), child};
          }};
}

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
  std::vector<running_child> running;                       ///< by child index
  std::deque<std::chrono::steady_clock::time_point> restarts;  ///< within the window
  bool given_up = false;
};

/// The supervisor's behavior; it spawns every child before returning.
caf::behavior supervisor(caf::stateful_actor<supervisor_state>* self, std::shared_ptr<const supervisor_config> cfg);

}  // namespace cl::actors
