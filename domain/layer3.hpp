#pragma once
/// Layer 3 (spec 5.3) over Resource representations: the one place that says which members of a
/// Resource carry its content or something derived from its text, and what becomes of them when
/// the resolved rights do not allow the request's use. Every path that shows a Resource, its
/// content, or anything computed from the content goes through these functions; the rule itself
/// is `check_content_use` (domain/rights.hpp).

#include "domain/errors.hpp"
#include "domain/field_mask.hpp"
#include "domain/rights.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::domain {

/// Members of a Resource representation that hold its content or text derived from it:
/// `content`, the stitched entity overlay `entities`, a search hit's `snippet`, and the digests a
/// guess of the content could be checked against offline: `hash_content`, `hash` (over the record,
/// content included) and the stitched `lineage` (each version's `hash_content`). A new derived
/// member (a summary) is added here and every path withholds it. The `ETag` of a Resource answer
/// is its `hash`: `content_allowed` says whether to send it.
const std::vector<std::string_view>& content_derived_members();

/// True when `rights` allow `use` of the content: only then may an answer carry content-derived
/// headers (the `ETag`) or members.
bool content_allowed(const resolved_rights& rights, const content_use& use);

/// True when a JSON read with `mask` shows a content-derived member; `mask` null is the default
/// representation, which includes `content`.
bool reveals_content(const field_mask* mask);

/// A read that shows content-derived members (`reveals`) is refused (403 USAGE_PROHIBITED) when
/// `rights` do not allow `use`; nullopt when it may go ahead. NDJSON, Markdown, the entity
/// overlay and content units always reveal content.
std::optional<api_error> refuse_content(const resolved_rights& rights, const content_use& use, bool reveals);

/// `representation` (a Resource as a JSON object text) as `use` may see it: unchanged when
/// `rights` allow it, otherwise without its content-derived members (its `rights` say why). For
/// the items of lists and the answers of writes, which are not refused as a whole.
std::string content_as_allowed(std::string representation, const resolved_rights& rights, const content_use& use);

}  // namespace cl::domain
