#pragma once
/// The content format (docs/content-format.md): a versioned JSON document of typed blocks with
/// inline spans, marks, links and entity annotations, after Portable Text. Validation rules
/// PCF001..PCF011, and the renderings the API produces from it (NDJSON blocks, Markdown).

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::domain {

/// The only content format version this build reads and writes.
inline constexpr std::string_view content_format_v1 = "cl.content/1";

/// Structural limits of one document (part of PCF002 and PCF009).
inline constexpr std::size_t max_blocks = 10000;
inline constexpr std::size_t max_list_depth = 8;

/// One broken rule: which (PCF001..PCF011), where (JSON Pointer), and what.
struct content_violation {
  std::string rule;
  std::string path;
  std::string description;
};

/// Checks `content` against PCF001..PCF011 in document order; the first violation, if any.
/// `base` is the JSON Pointer of `content` in the request body (e.g. "/content").
std::optional<content_violation> validate_content(const boost::json::value& content, std::string_view base);

/// Every rule with its one-line meaning, in order (for docs and the OpenAPI document).
struct content_rule {
  std::string_view id;
  std::string_view meaning;
};
const std::vector<content_rule>& content_rules();

/// Calls `line` once per top-level block with that block's compact JSON (one NDJSON line each,
/// without the newline). Works on a validated document.
void for_each_block_line(const boost::json::value& content, const std::function<void(std::string)>& line);

/// Markdown rendered from a validated document. Entity annotations are left out (plain text).
std::string render_markdown(const boost::json::value& content);

/// The `blb_` ids the content's image blocks reference, sorted, each once (who may read a blob
/// follows from the Resources that reference it: docs/api.md, Blobs).
std::vector<std::string> referenced_blobs(const boost::json::value& content);
/// The same from a canonical content document's text (parsed only when it has an image block).
std::vector<std::string> referenced_blobs_in(std::string_view content_json);

/// One image block's blob reference: the JSON Pointer of its `blob` member (under `base`, the
/// pointer of the content in the request body) and the `blb_` id.
struct blob_reference {
  std::string pointer;
  std::string blob_id;
};
/// Every image block's blob reference, in document order (a blob referenced twice appears twice).
std::vector<blob_reference> blob_references(const boost::json::value& content, std::string_view base);

/// The words of a content document a search indexes: every `text` (spans, code), `alt` and
/// `caption` anywhere in it (paragraphs, headings, quotes, list items, table cells, images), in
/// document order, separated by newlines.
std::string search_text(const boost::json::value& content);

/// One entity annotation found in the content.
struct entity_mention {
  std::string entity_id;
  std::string entity_type;
  std::string label;       ///< the mark definition's label, or empty
  std::string block_key;   ///< the block holding the annotated span
  std::string text;        ///< the annotated text
};

/// Every entity annotation in document order (the entity overlay is built from these).
std::vector<entity_mention> entity_mentions(const boost::json::value& content);

/// The entity overlay's entries: one per entity, in order of first mention, each with every
/// mention `{entity_id, entity_type, label?, mentions: [{block_key, text}]}`.
boost::json::array entity_overlay(const boost::json::value& content);

}  // namespace cl::domain

#include "domain/errors.hpp"

namespace cl::domain {

/// The API error for a content violation: reason PCF001..PCF011, a details entry with its path.
api_error to_api_error(const content_violation& v);

}  // namespace cl::domain
