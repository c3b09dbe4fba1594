#pragma once
/// Snippets of a hit's text around the words a query looks for (storage-private).

#include <xapian.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>

namespace cl::storage::search_detail {

/// The words a query looks for, to mark in snippets: as written (lower case) and stemmed (the
/// query's `Z` terms). Title-only (`S`) and filter (`X`) terms are not marked in the text.
struct marked_terms {
  std::unordered_set<std::string> raw, stems;
  /// First letters of the stems: where the stemmer keeps first letters (English), words starting
  /// otherwise are never stemmed.
  std::string stem_starts;
};

/// The marked terms of query `q`.
marked_terms terms_of(const Xapian::Query& q);

/// Up to about `length` bytes of `text` around its first marked word, plain text (no HTML), each
/// marked word between U+00AB and U+00BB, cuts shown as U+2026. The cost is a scan up to the end of
/// the window, a few stems: not the whole document's analysis.
std::string snippet_of(std::string_view text, const marked_terms& m, const Xapian::Stem& stem, std::size_t length);

}  // namespace cl::storage::search_detail
