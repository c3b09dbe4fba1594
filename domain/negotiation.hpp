#pragma once
/// Content negotiation for Resource reads (spec 4.3): JSON, NDJSON blocks, Markdown.

#include "domain/errors.hpp"

#include <string_view>
#include <variant>

namespace cl::domain {

enum class rendering { json, ndjson, markdown };

/// The media type of a rendering.
std::string_view media_type(rendering r);

/// Chooses from `format` (json, ndjson, markdown; wins when present) and `Accept` (media ranges
/// with q-values; wildcards allowed; absent means JSON). Nothing acceptable -> NOT_ACCEPTABLE;
/// an unknown `format` -> INVALID_ARGUMENT.
std::variant<rendering, api_error> negotiate(std::string_view format, std::string_view accept);

}  // namespace cl::domain
