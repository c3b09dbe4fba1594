#pragma once
/// The values a search index takes and gives (storage/search/index.hpp): what it keeps of a
/// Resource, a query, a hit, a page. Apart from the index's class so that the actors' message types
/// (actors/type_ids.hpp) do not rebuild when the index's internals change.

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace cl::storage {

/// What the index keeps of a Resource.
struct indexed_resource {
  std::string tenant, id, title, type, language, work_id;
  std::string text;                    ///< all block text, table cells, image alt and captions
  std::vector<std::string> readers;    ///< principals with a grant on it (subjects and groups)
};

/// A search: the query text and its filters, for a caller whose grants count through `principals`.
struct search_query {
  std::string tenant;
  std::string text;
  std::vector<std::string> types, languages;
  std::string work_id;
  std::vector<std::string> principals;           ///< the caller's subject and groups
  /// Ids not to rank (a session's answered hits, hits this answer refused); may be null.
  const std::unordered_set<std::string>* skip = nullptr;
  std::size_t page_size = 20;
  /// The whole query (words, phrases, `-word`, `NOT`, `title:`) evaluated against each Resource's
  /// metadata (its title) alone, ranked by that alone: what a caller whose rights refuse a
  /// Resource's content may find it by (layer 3). Hits then carry no snippet.
  bool metadata_only = false;
  /// Rankings this call may run (at least 1): a ranking that meets a reader the writer has moved
  /// on from, or a remembered document id gone stale, runs again while this lasts (the answer's
  /// one budget: actors/search/search_plans.cpp). Out of it, the page drops what it should have passed
  /// over and says it is not exhausted.
  int max_runs = 3;
};

struct search_hit {
  std::string id, title, type, language, work_id;
  double score = 0;
  std::string snippet;  ///< matched terms between U+00AB and U+00BB; empty when nothing to show
};

struct search_page {
  std::vector<search_hit> hits;
  std::uint64_t total_estimate = 0;
  bool exhausted = false;  ///< nothing ranked after the last hit
  /// The level of the query term's impact tiers that ranked this page (0: the whole posting list;
  /// storage/search/index.cpp). The same page either way; tests and benches read it.
  int tier_level = 0;
  /// The page was ranked among the oldest documents of each shard alone: its window is all at the
  /// query's highest possible weight, which no later document can pass (ties go to the lower id).
  bool prefix_ranked = false;
  int runs = 0;  ///< rankings this page took (of `search_query::max_runs`)
  /// The change-log position the index revision it was ranked on holds (every change up to it
  /// applied): a caller that knows of no later change needs no second look at the grants.
  std::uint64_t applied = 0;
};

/// A query Xapian cannot parse (the caller answers 400 with it).
struct query_syntax_error {
  std::string message;
};

}  // namespace cl::storage
