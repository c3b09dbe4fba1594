#pragma once
/// Resources (spec 2.2): the create request, the stored record and the read composition.
/// The stored record is canonical JSON without `rights` and `hash`; reads splice both in.

#include "domain/errors.hpp"

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::domain {

/// Resource types (spec 2.2 shows DOCUMENT; the rest are ours, docs/api.md).
const std::vector<std::string>& resource_types();

/// Source origin types (spec 2.4 shows UPLOAD).
const std::vector<std::string>& source_origin_types();

/// A validated `POST /resources` body.
struct resource_draft {
  std::string title;
  std::string type;
  std::string language;
  std::string content_json;  ///< canonical (serialized) content document
  std::optional<std::string> work_id;
  std::optional<std::string> source_id;  ///< link an existing Source
  struct new_source {
    std::string name, origin_type, system;
  };
  std::optional<new_source> source;  ///< or create one
  std::vector<std::string> agents;   ///< additional agt_ ids (must exist)
  std::vector<std::string> tooling;  ///< models and tools
  std::string activity_type = "CREATION";
};

/// Validates a create body: unknown members, field types, PCF rules on `content`.
std::variant<resource_draft, api_error> parse_resource_create(const boost::json::object& body);

/// RFC 7396 JSON Merge Patch: `patch` applied to `target`.
boost::json::value merge_patch(boost::json::value target, const boost::json::value& patch);

/// What a PUT or PATCH asks for, checked against the current record inside the write.
struct resource_change {
  resource_draft draft;      ///< the complete new state (title, type, language, content, ...)
  std::string update_token;  ///< must equal the current one
};

/// PUT: a complete replacement (title, type, language, content) plus `update_token`; optional
/// `agents`, `tooling`. `work_id` and sources change through their own operations.
std::variant<resource_change, api_error> parse_resource_replace(const boost::json::object& body);

/// PATCH: a merge patch of title, type, language and content over `current` (a stored record),
/// plus `update_token`; the result is validated like a create.
std::variant<resource_change, api_error> parse_resource_patch(const boost::json::object& body,
                                                             const boost::json::object& current);

/// Identity and time of a new Resource.
struct resource_identity {
  std::string tenant, id, version, created, updated;
  std::optional<std::string> source_id;
};

/// The stored record: every Resource field except `rights` and `hash`, plus `update_token`.
std::string resource_record_json(const resource_draft& d, const resource_identity& ids, const std::string& update_token);

/// `record` attached to `work_id`: `work_id` set, `updated` and `update_token` replaced.
std::string promoted_record_json(std::string_view record_json, const std::string& work_id, const std::string& updated,
                                 const std::string& update_token);

/// "sha256:<hex>" of `bytes`.
std::string sha256_tag(std::string_view bytes);

/// The strong ETag of a read: depends on the stored record and on the resolved rights (without
/// their `resolved_at`), so a change of either changes it.
std::string resource_hash(std::string_view record_json, std::string_view rights_digest_input);

/// `record` with `"rights":<rights>,"hash":<hash>` spliced in before its closing brace.
std::string compose_resource(std::string_view record_json, std::string_view rights_json, std::string_view hash);

/// True when an If-None-Match header value matches `hash` (single, list, weak form, or `*`).
bool if_none_match_hits(std::string_view header, std::string_view hash);

}  // namespace cl::domain
