#pragma once
/// The two request handlers the listeners run: the public API (route, then answer locally or
/// through a per-request coordinator) and the operations API (/metrics, /healthz, /readyz).

#include "http/handler.hpp"
#include "http/router.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace caf {
class actor_system;
}

namespace cl::domain {
class page_token_codec;
class feed_cursor_codec;
}

namespace cl::actors {
class actor_directory;
class metrics;
struct service_health;
}  // namespace cl::actors

namespace cl::http {

struct public_api_settings {
  std::chrono::milliseconds timeout{2000};  ///< each request's deadline inside the actors
  std::shared_ptr<const domain::page_token_codec> page_tokens;
  std::shared_ptr<const domain::feed_cursor_codec> feed_cursors;  ///< lists answer `changes_cursor`
  std::int64_t idempotency_retention_ms = 0;
  std::int64_t recent_sign_in_seconds = 900;
  std::shared_ptr<const resource_metadata> metadata;  ///< what the local routes may read (and the 401s name)
};

/// The public API over `routes` (the route groups', app/groups.hpp).
std::unique_ptr<request_handler> make_public_api(caf::actor_system& sys, std::vector<route> routes,
                                                 std::shared_ptr<actors::actor_directory> directory,
                                                 const public_api_settings& settings);

/// Fault injection on the operations listener (`admin.fault_injection`): the supervised actors by
/// name, how to kill one (its supervisor restarts it) and how to delay one.
struct fault_injection {
  std::vector<std::string> actors;
  std::function<void(const std::string& name)> kill;
  std::function<void(const std::string& name, int ms)> delay;  ///< hold its next messages for `ms`
};

/// The operations listener's handler: never part of the public contract. `faults` null: fault
/// injection is off and /faults says how to turn it on.
std::unique_ptr<request_handler> make_admin_api(std::shared_ptr<actors::metrics> stats,
                                                std::shared_ptr<actors::service_health> health,
                                                std::shared_ptr<const fault_injection> faults = nullptr);

}  // namespace cl::http
