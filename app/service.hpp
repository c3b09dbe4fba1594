#pragma once
/// The composition root: the whole service in one object -- storage, the route groups' actors
/// under one supervisor (app/groups.hpp), and the two listeners. `contentlake serve` runs one;
/// end-to-end tests run one in-process on ephemeral ports.

#include "config/settings.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace caf {
class actor_system;
}

namespace cl::actors {
class actor_directory;
}

namespace cl::storage {
class record_store;
}

namespace cl::app {

class service {
public:
  /// Takes validated settings; nothing starts until `start`.
  explicit service(config::settings settings);
  ~service();
  service(const service&) = delete;
  service& operator=(const service&) = delete;

  /// Opens storage and identity, spawns the actors and binds both listeners. Throws
  /// std::runtime_error with a message for the operator when anything cannot start.
  /// `handle_signals`: the service is the process (`contentlake serve`): it stops on SIGINT and
  /// SIGTERM, and sets its threads' priorities (`search.indexer_priority`).
  void start(bool handle_signals);

  /// The bound public and admin ports (useful with port 0).
  std::uint16_t port() const;
  std::uint16_t admin_port() const;
  /// The bound port of a route group's listener (e.g. "blobs", the embedded object store).
  std::optional<std::uint16_t> listener_port(const std::string& name) const;

  /// Serves until stopped (signal, `stop`, or the supervisor giving up); then drains in-flight
  /// requests, stops the actors and returns the exit code: 0, or 70 when the supervisor gave up.
  int run();

  /// Asks for a graceful stop; callable from any thread.
  void stop();

  /// For tests: the actor system, the directory of concern actors, and the record store.
  caf::actor_system& system();
  actors::actor_directory& directory();
  const storage::record_store& store() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cl::app
