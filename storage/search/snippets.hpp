#pragma once
/// Snippets of a hit's text around the words a query looks for (storage-private).

#include <xapian.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
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

/// The snippets of one page of hits: each up to about `length` bytes of a hit's text around its
/// first marked word, plain text (no HTML), each marked word between U+00AB and U+00BB, cuts shown
/// as U+2026. The cost is a scan up to the end of the window, not the whole document's analysis.
/// A page's hits share their words: each language's stemmer is made once a page, and a word is
/// stemmed once a page (the answer kept by word), where it was once per hit and occurrence.
class snippet_maker {
public:
  explicit snippet_maker(const marked_terms& m) : m_(m) {}
  std::string of(std::string_view text, const std::string& language, std::size_t length);

private:
  struct language_state {
    Xapian::Stem stem;
    bool kept_first_letter;                      ///< the stemmer leaves a word's first letter as it is
    std::unordered_map<std::string, bool> seen;  ///< lower-case word -> its stem is marked
  };
  bool marked(std::string_view word, language_state& l);

  const marked_terms& m_;
  std::map<std::string, language_state> languages_;
};

}  // namespace cl::storage::search_detail
