#pragma once
/// Resolved rights (spec 2.3). Contract terms arrive with the rights issue; until a Work has a
/// contract in force, a Resource's rights resolve to `usable: false` with empty term lists —
/// the correct answer for "no contract".

#include <string>
#include <string_view>

namespace cl::domain {

/// One resolution: the `rights` JSON object and the part of it that identifies its content
/// (everything but `resolved_at`), which feeds the Resource's `hash`.
struct resolved_rights {
  std::string json;
  std::string digest_input;
};

/// The resolution for a Resource with no contract in force (staged, or its Work uncovered).
resolved_rights no_contract_rights(std::string_view resolved_at);

}  // namespace cl::domain
