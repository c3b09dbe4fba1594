#pragma once
/// Contracts (spec 2.3 terms; the record's other fields are ours, docs/api.md "Contracts"):
/// the create / new-version request, the stored record, and the view the rights resolver reads.

#include "domain/errors.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::domain {

/// Contract statuses. Only ACTIVE contracts contribute rights (inside their window).
const std::vector<std::string>& contract_statuses();
/// Values of the term enumerations (spec 2.3 shows some; the rest are ours).
const std::vector<std::string>& term_statuses();         ///< PERMITTED, PROHIBITED, REQUIRED
const std::vector<std::string>& usage_types();           ///< ACCESS, DISPLAY, DERIVE, AI_RETRIEVAL, AI_TRAINING
const std::vector<std::string>& usage_methods();         ///< STREAM, MCP
const std::vector<std::string>& manifestation_types();   ///< EBOOK, AUDIOBOOK, PRINT, WEB
const std::vector<std::string>& handling_types();        ///< ATTRIBUTION, COPYRIGHT_NOTICE, LINK_BACK

/// Unix seconds of an ISO 8601 UTC timestamp `YYYY-MM-DDTHH:MM:SSZ`; nullopt if malformed.
std::optional<std::int64_t> parse_utc(std::string_view text);
/// `YYYY-MM-DDTHH:MM:SSZ` of Unix seconds.
std::string format_utc(std::int64_t unix_seconds);

/// The terms of one contract version as the resolver needs them.
struct contract_view {
  struct territory {
    bool worldwide = false;
    std::vector<std::string> codes;  ///< ISO 3166-1 alpha-2, sorted
    std::string status;
  };
  struct manifestation {
    std::string type, status;
  };
  struct usage {
    std::string type, status, method, exception;  ///< method/exception may be empty
  };
  struct handling {
    std::string type, status;
  };
  std::string id;
  std::int64_t version = 0;
  std::string status;
  std::int64_t valid_from = 0;
  std::optional<std::int64_t> valid_until;  ///< exclusive; none: open-ended
  std::vector<std::string> work_ids;
  std::vector<territory> territorial_rights;
  std::vector<manifestation> manifestation_rights;
  std::vector<usage> usage_terms;
  std::vector<handling> handling_terms;
};

/// A validated contract body: the terms, plus the commercial terms as canonical JSON (or empty).
struct contract_draft {
  std::string title;
  contract_view terms;            ///< id and version are filled in by the write
  std::string commercial_json;    ///< canonical JSON object, empty when absent
};

/// Validates a `POST /v0/contracts` body or a new version's body (same members, plus
/// `update_token` for a new version, which the caller checks). 400 INVALID_ARGUMENT with one
/// `details` entry naming the offending JSON Pointer.
std::variant<contract_draft, api_error> parse_contract(const boost::json::object& body, bool new_version);

/// The stored record of one contract version: canonical JSON with every member.
std::string contract_record_json(const contract_draft& d, const std::string& id, std::int64_t version,
                                 const std::string& created, const std::string& updated,
                                 const std::string& update_token);

/// The resolver's view of a stored record; nullopt when it is not one.
std::optional<contract_view> contract_view_of(std::string_view record_json);

/// The `commercial_terms` of a stored record as canonical JSON (members sorted; comparable with
/// `contract_draft::commercial_json`); empty when it has none.
std::string commercial_terms_of(std::string_view record_json);

/// The stored record without `commercial_terms` (a read without `contracts.commercial.read`).
std::string without_commercial_terms(std::string_view record_json);

/// Top-level members a contract read can name in `fields`.
const std::vector<std::string>& contract_fields();

}  // namespace cl::domain
