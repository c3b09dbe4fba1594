#pragma once
/// What a route group contributes to the service, collected in one value before anything starts:
/// its routes (with their scopes), its configuration section, and its supervised actors. Each
/// group exports `register_<group>(registry&)` (app/groups.hpp); app/groups.cpp lists them; the
/// composition root (app/service.cpp) builds the router, the settings and the supervisor from the
/// result. docs/architecture.md has the recipe for a new group.

#include "actors/supervisor.hpp"
#include "config/settings.hpp"
#include "http/router.hpp"
#include "storage/identity.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cl::storage {
class backend;
class record_store;
class lease_keeper;
}

namespace boost::asio {
class io_context;
}

namespace cl::actors {
class metrics;
class token_cache;
}  // namespace cl::actors

namespace cl::app {

/// Where the service's secrets are: `secrets.file`, else the data dir.
inline storage::secret_place secrets_of(const config::settings& s) { return {s.data_dir, s.secrets_file}; }

/// This node's name: `node.name`, else the one kept in `<data_dir>/node-name`, made at the first
/// start (the host name and six random hex digits: two nodes on one host differ). Throws
/// std::runtime_error when it cannot be kept.
std::string node_name_of(const config::settings& s);

/// What a group's spawning functions get at start: validated settings and the shared services the
/// composition root owns.
struct startup {
  const config::settings& settings;
  /// This node's name (`node.name`, or the one kept in the data dir).
  std::string node;
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<actors::actor_directory> directory;
  std::shared_ptr<actors::metrics> stats;
  std::shared_ptr<actors::service_health> health;
  std::shared_ptr<actors::token_cache> tokens;
  /// Stops the service (the supervisor gave up; a fatal condition found by a group's actor).
  std::function<void(int exit_code)> stop;
  /// The bound port of a group's listener by name (listeners start before actors), if it runs.
  std::function<std::optional<std::uint16_t>(const std::string& name)> listener_port;
  /// True when the service is the whole process (`contentlake serve`), false in-process (tests): a
  /// group may then set what is the process's, such as its threads' priorities.
  bool owns_process = false;
  /// This node's leases of work done once among the nodes (storage/leases.hpp): a group's actor
  /// does such work only while `holds` its lease.
  std::shared_ptr<storage::lease_keeper> leases{};
  /// Where the records live (storage/backend.hpp): a group asks its traits and opens what it
  /// keeps there (search sessions, held slots, the rate tally), never its name.
  std::shared_ptr<storage::backend> backend{};
};

/// Spawns a concern actor that reads the record store: detached where the backend's reads block
/// (`storage::backend_traits::reads_block`: a round trip then holds a thread of its own, never one
/// of the scheduler's that serve every other request), on the scheduler elsewhere.
template <class Behavior, class... Ts>
auto spawn_reading(caf::actor_system& sys, bool reads_block, Behavior behavior, Ts... xs) {
  if (reads_block) return sys.spawn<caf::detached>(behavior, xs...);
  return sys.spawn(behavior, xs...);
}

/// A group's spawning function: checks its configuration and answers how the supervisor
/// (re)starts its actors (`actors::supervised`), or an error naming what is wrong; the service
/// then does not start.
using spawn_fn = std::function<caf::expected<std::vector<actors::child_spec>>(const startup&)>;

/// A listener a group runs on the service's I/O context (the embedded object store): its bound
/// port and how to stop it (stop accepting, close its connections) at shutdown.
struct running_listener {
  std::function<std::uint16_t()> port;
  std::function<void()> stop;
};

/// Binds a group's listener, or an error naming what is wrong (the service then does not start);
/// an empty `running_listener` (no `stop`) when the configuration says not to run it.
using listener_fn = std::function<caf::expected<running_listener>(const startup&, boost::asio::io_context&)>;

/// An error for a spawning function to return: the service stops with `what` as its message.
caf::error startup_failure(std::string what);

/// The operator's text of an error a spawning function returned.
std::string describe(const caf::error& e);

class registry {
public:
  /// Adds the group's routes; the path templates and scopes are API (docs/api.md, OpenAPI).
  void add_routes(std::vector<http::route> routes);
  /// Adds the group's configuration section: dotted keys, defaults and setters (config/settings.hpp).
  void add_options(std::vector<config::option> options);
  /// Adds a spawning function for the group's supervised actors; `name` is for messages.
  void add_actors(std::string name, spawn_fn spawn);
  /// Adds a listener the group runs on the service's I/O context; `name` is for messages.
  void add_listener(std::string name, listener_fn start);

  const std::vector<http::route>& routes() const { return routes_; }
  const std::vector<config::option>& options() const { return options_; }

  /// Runs every spawning function in registration order; the first failure ends it.
  caf::expected<std::vector<actors::child_spec>> spawn_all(const startup& s) const;
  /// Starts every group's listener, by name; the first failure ends it.
  caf::expected<std::vector<std::pair<std::string, running_listener>>> start_listeners(const startup& s,
                                                                                       boost::asio::io_context& ioc) const;

private:
  std::vector<http::route> routes_;
  std::vector<config::option> options_;
  std::vector<std::pair<std::string, spawn_fn>> spawners_;
  std::vector<std::pair<std::string, listener_fn>> listeners_;
};

}  // namespace cl::app
