#pragma once
/// Record building blocks shared by every write: timestamps, agents derived from principals
/// (spec 5.5) and Activity records.

#include "domain/principal.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cl::domain {

/// ISO 8601 UTC with milliseconds, e.g. 2026-11-22T01:02:03.456Z.
std::string iso8601_now();

/// `unix_ms` as UTC ISO 8601 with milliseconds (`2026-11-25T14:20:52.123Z`).
std::string iso8601_at_ms(std::int64_t unix_ms);

/// The agent a principal acts as: a `u_` principal is that person's HUMAN agent, an `a_`
/// principal a SYSTEM agent. Stable: the same principal always yields the same `agt_` id.
struct agent_ref {
  std::string id;    ///< agt_...
  std::string kind;  ///< HUMAN or SYSTEM
};
agent_ref derived_agent(const principal& who);

/// The Agent record stored for a derived agent.
std::string agent_record_json(const agent_ref& agent, const principal& who, const std::string& at);

/// Activity types (docs/api.md). ADAPTATION marks content derived from other content.
inline const std::vector<std::string>& activity_types() {
  static const std::vector<std::string> types = {"CREATION", "UPDATE", "VERSION", "PROMOTION", "ADAPTATION"};
  return types;
}

/// What an Activity records.
struct activity_input {
  std::string id;           ///< act_...
  std::string type;         ///< one of activity_types()
  std::string target_kind;  ///< resource, work, ...
  std::string target_id;
  std::vector<std::string> performed_by;  ///< agt_ ids; the derived agent first
  std::vector<std::string> tooling;       ///< models and tools, never agents
  std::string at;
};
std::string activity_record_json(const activity_input& a);

}  // namespace cl::domain
