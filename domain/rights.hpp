#pragma once
/// Resolved rights (spec 2.3): contract terms intersected with platform policy and the validity
/// window at one moment. A pure function; the rules are documented in docs/rights.md and each has
/// a row in tests/domain/rights_test.cpp.

#include "domain/contract.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cl::domain {

/// One resolution: the `rights` JSON object and the part of it that identifies its content
/// (everything but `resolved_at`), which feeds the Resource's `hash`.
struct resolved_rights {
  /// One resolved usage term, for checking a use without parsing `json`.
  struct usage {
    std::string type, method, status;
  };
  std::string json;
  std::string digest_input;
  std::vector<usage> usage_terms;
  /// The contracts in force (`basis`), with their versions: what the rights depend on.
  std::vector<std::pair<std::string, std::int64_t>> basis;
  /// Unix seconds at which a contract window opens or closes next: the resolution must not be
  /// served from then on. Max when no window edge lies ahead.
  std::int64_t valid_until = std::numeric_limits<std::int64_t>::max();
  /// Unix seconds of the last window edge at or before the resolution (min when none): with
  /// `valid_until`, the window the resolution holds in.
  std::int64_t in_force_since = std::numeric_limits<std::int64_t>::min();
  bool usable = false;
  std::string resolved_at;  ///< as in `json`
  /// What travels (domain/odrl.hpp), made with the resolution: the ODRL rules and what `check_content_use` answers a declared AI_TRAINING /
  /// AI_RETRIEVAL without a method (the `Content-Usage` and `tdm-reservation` headers).
  std::string odrl_rules;
  std::string odrl_key;  ///< hex SHA-256 of the terms and the window: a policy's tag is made from it
  bool train_ai = false;
  bool search = false;
};

/// The resolution for a Resource with no contract in force (staged, or its Work uncovered).
resolved_rights no_contract_rights(std::string_view resolved_at);

/// Platform-wide policy (config/policy.json, docs/rights.md).
struct platform_policy {
  std::string version;                               ///< part of every resolution's cache key and hash
  std::vector<std::string> prohibited_usages;        ///< never permitted, whatever a contract says
  std::vector<std::string> explicit_permission_usages;  ///< prohibited unless a contract permits them
  std::vector<std::string> embargoed_territories;    ///< ISO 3166-1 alpha-2, always prohibited
  std::vector<std::string> required_handling;        ///< handling terms always REQUIRED
};

/// Parses config/policy.json; the error names the offending member.
std::variant<platform_policy, std::string> parse_policy(std::string_view json_text);

/// Resolves `contracts` (every version in the store that lists the Work; any status) under
/// `policy` at Unix second `at`.
resolved_rights resolve_rights(const std::vector<contract_view>& contracts, const platform_policy& policy,
                               std::int64_t at);

/// A use of content a request makes: reading it (ACCESS and DISPLAY), or a declared purpose.
struct content_use {
  std::string usage;   ///< empty: a plain read (ACCESS + DISPLAY)
  std::string method;  ///< optional, with a declared purpose
};

/// Parses `X-Usage-Purpose` (`AI_RETRIEVAL`, `AI_RETRIEVAL; method=MCP`, `AI_TRAINING`, ...);
/// no header: a plain read. 400 INVALID_ARGUMENT naming the header when malformed, empty or blank
/// (a header sent empty is a declared purpose gone missing, not a plain read).
std::variant<content_use, api_error> parse_content_use(std::optional<std::string_view> header);

/// Layer 3 (spec 5.3): whether `rights` allow `use`. A plain read is refused only where ACCESS or
/// DISPLAY resolves PROHIBITED (a Resource with no contract in force stays readable, `usable:
/// false`); a declared purpose needs an explicit PERMITTED term for it (with its method, or one
/// without a method that no method-specific prohibition overrides). The refusal is 403
/// USAGE_PROHIBITED naming the usage in `details`.
std::optional<api_error> check_content_use(const resolved_rights& rights, const content_use& use);

/// A (usage type, status) pair that some stored version of a tenant's contracts names.
using usage_named = std::pair<std::string, std::string>;

/// What `check_content_use` can answer for `use` on any Resource of a tenant whose stored contract
/// versions (every one, any status or window) name the pairs `named`, under `policy`. Conservative:
/// a member is false only when no contract, version or time window of that tenant could make it
/// so. A plain read can be refused only where something names ACCESS or DISPLAY PROHIBITED (or
/// the policy prohibits them); a declared purpose can be allowed only where some contract names
/// it PERMITTED and the policy does not prohibit it.
struct possible_answers {
  bool allowed = true;
  bool refused = true;
};
possible_answers possible_content_answers(const content_use& use, const std::vector<usage_named>& named,
                                          const platform_policy& policy);

}  // namespace cl::domain
