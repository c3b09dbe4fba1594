#pragma once
/// The MCP endpoint's plan (issue 30): `POST /v0/mcp`, one JSON-RPC message per request. Each tool
/// call runs the REST route's own plan (the same actors, layers and limits) on a request made for it,
/// with the purpose fixed to `AI_RETRIEVAL; method=MCP`; only the answer's shape differs.

#include "actors/coordinator.hpp"
#include "actors/mcp/mcp_messages.hpp"

#include <caf/event_based_actor.hpp>

namespace cl::actors {

void plan_mcp(const plan_run& run);

/// The MCP group's actor: answers its policy.
mcp_actor::behavior_type mcp_holder(mcp_actor::pointer self, std::shared_ptr<const mcp_policy> policy);

}  // namespace cl::actors
