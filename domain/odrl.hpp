#pragma once
/// Rights that travel (docs/rights.md, "Rights that travel"): the resolved rights a caller gets,
/// also as a W3C ODRL 2.2 policy (JSON-LD), as the IETF AI-preferences `Content-Usage` header and as
/// the W3C TDMRep headers. Everything here is made from one resolution (`resolved_rights`), so what
/// travels says what `check_content_use` enforces: the mapping table is in docs/rights.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::domain {

struct resolved_rights;

/// The IRI of our ODRL profile (its actions, channels and media; docs/rights.md "The profile").
inline constexpr std::string_view odrl_profile_iri = "https://w3id.org/contentlake/odrl";

/// The merged terms of a resolution, as the ODRL rules are made from them.
struct odrl_terms {
  struct usage {
    std::string type, method, status, exception;
  };
  std::vector<usage> usage_terms;  ///< resolved, merged (one per usage type and method)
  std::string worldwide;           ///< the status of a worldwide territory term, or empty
  std::vector<std::string> permitted_codes, prohibited_codes;  ///< ISO 3166-1 alpha-2
  std::vector<std::string> permitted_media, prohibited_media;  ///< manifestation types
  std::vector<std::pair<std::string, std::string>> handling;   ///< (handling type, status)
  std::optional<std::int64_t> from, until;  ///< the window the resolution holds in (Unix seconds; until exclusive)
};

/// The rule members of the policy (`"permission":[...],"prohibition":[...]`, JSON text without
/// braces), made once per resolution and kept with it.
std::string odrl_rules(const odrl_terms& terms);

/// Who the policy is between and what it is about.
struct odrl_parties {
  std::string_view tenant;     ///< the rights holder (`assigner`)
  std::string_view principal;  ///< the caller (`assignee`)
  std::string_view target;     ///< the Resource's `uri`
};

/// What identifies a resolution's policy whoever asks (hex SHA-256 of its terms and its window),
/// made once with the resolution (`resolved_rights::odrl_key`).
std::string odrl_resolution_key(const resolved_rights& rights);

/// The policy's identity for one resolution, caller and target: the `uid`'s last segment and the
/// document's ETag (32 hex digits). The same resolution (every term, window and contract version)
/// for the same caller and Resource always gives the same tag.
std::string odrl_tag(const resolved_rights& rights, const odrl_parties& parties);

/// The ODRL 2.2 Agreement (JSON-LD text) for `rights`.
std::string odrl_policy(const resolved_rights& rights, const odrl_parties& parties);

/// `s` with the bytes an IRI may not hold (controls, space, `"<>\^`{|}`, `%`) percent-encoded.
std::string iri_escape(std::string_view s);

/// The answer headers of a content read under `rights` (and of its refusal): `Content-Usage`
/// (`train-ai=y|n, search=y|n`), `tdm-reservation` (`0|1`) and `tdm-policy` (`policy_path`, the
/// Resource's ODRL document, a reference relative to the request's URL).
std::vector<std::pair<std::string, std::string>> rights_headers(const resolved_rights& rights,
                                                                std::string_view policy_path);

/// True for the names `rights_headers` answers: what a reply built from a content read's carries on.
bool is_rights_header(std::string_view name);

/// The path of Resource `id`'s ODRL document.
std::string odrl_policy_path(std::string_view resource_id);

/// `/.well-known/tdmrep.json` (TDMRep, JSON form): every content path reserved, pointing at
/// `policy_path` (an ODRL Offer saying how to obtain a licence).
std::string tdmrep_json(std::string_view policy_path);

/// The service-wide TDMRep policy: an ODRL Offer of `tdm:mine` whose duty is to obtain consent
/// (a licence) from `contact` (an IRI: https: or mailto:; empty: the service).
std::string tdm_offer_json(std::string_view contact);

}  // namespace cl::domain
