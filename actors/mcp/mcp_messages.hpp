#pragma once
/// The MCP route group's actor (issue 30): it holds the endpoint's configuration (the Origins it
/// accepts) for the plans, which ask it before anything else; a supervised concern like the others,
/// so fault tests can kill it and requests meanwhile get 503.

#include "actors/type_ids.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <memory>
#include <string>
#include <vector>

CAF_ADD_ATOM(contentlake, cl::actors, mcp_policy_atom, "mcppolicy")

namespace cl::actors {

/// What the endpoint checks on every message.
struct mcp_policy {
  std::vector<std::string> allowed_origins;  ///< exact `scheme://host[:port]`; empty: no Origin is accepted
  std::string server_version;                ///< `serverInfo.version`
};

using mcp_actor = caf::typed_actor<caf::replies_to<mcp_policy_atom>::with<std::shared_ptr<const mcp_policy>>>;

}  // namespace cl::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const cl::actors::mcp_policy>)
