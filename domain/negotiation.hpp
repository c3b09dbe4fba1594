#pragma once
/// Content negotiation for Resource reads (spec 4.3): JSON, NDJSON blocks, Markdown.

#include "domain/errors.hpp"

#include <optional>
#include <string_view>
#include <variant>

namespace cl::domain {

enum class rendering { json, ndjson, markdown };

/// The media type of a rendering.
std::string_view media_type(rendering r);

/// The quality `accept` gives the media type `type`: the q of the most specific range that covers
/// it (RFC 9110 12.5.1), 1 when `accept` is empty, below 0 when no range covers it.
double quality_of(std::string_view accept, std::string_view type);

/// 406 NOT_ACCEPTABLE when `accept` does not allow the media type `type` (absent allows it).
std::optional<api_error> refuse_unless(std::string_view accept, std::string_view type);

/// The rule of every operation that answers JSON only: 406 NOT_ACCEPTABLE when `accept` does not
/// allow application/json (absent, `*/*`, `application/*` and `application/json` do).
std::optional<api_error> refuse_unless_json(std::string_view accept);

/// Chooses from `format` (json, ndjson, markdown; wins when present) and `Accept` (media ranges
/// with q-values; wildcards allowed; absent means JSON). Nothing acceptable -> NOT_ACCEPTABLE;
/// an unknown `format` -> INVALID_ARGUMENT.
std::variant<rendering, api_error> negotiate(std::string_view format, std::string_view accept);

}  // namespace cl::domain
