#include "storage/search/snippets.hpp"

#include "storage/search/terms.hpp"

#include <algorithm>
#include <vector>

namespace cl::storage::search_detail {

marked_terms terms_of(const Xapian::Query& q) {
  marked_terms m;
  for (auto t = q.get_unique_terms_begin(); t != q.get_unique_terms_end(); ++t) {
    const std::string& term = *t;
    if (!text_term(term)) continue;
    if (term[0] == 'Z') {
      m.stems.insert(term.substr(1));
      if (m.stem_starts.find(term[1]) == std::string::npos) m.stem_starts.push_back(term[1]);
    } else {
      m.raw.insert(term);
    }
  }
  return m;
}

/// Whether `stem` leaves a word's first letter as it is. Others strip prefixes (Indonesian "membaca"
/// to "baca", Irish, Arabic) or change letters (German "ä" to "a"): for those every word is stemmed.
static bool keeps_first_letter(const Xapian::Stem& stem) {
  if (stem.is_none()) return true;
  auto name = stem.get_description();
  return name == "Xapian::Stem(english)" || name == "Xapian::Stem(porter)";
}

/// Whether `word` (as it stands in the text) is one the query looks for. Where the stemmer keeps
/// first letters, a word no stem opens with is not stemmed.
bool snippet_maker::marked(std::string_view word, language_state& l) {
  std::string lower{word};
  bool ascii = true;
  for (auto& c : lower) {
    if (static_cast<unsigned char>(c) >= 0x80) ascii = false;
    else if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!ascii) lower = Xapian::Unicode::tolower(lower);
  if (m_.raw.count(lower)) return true;
  if (m_.stems.empty() || (l.kept_first_letter && m_.stem_starts.find(lower[0]) == std::string::npos)) return false;
  auto known = l.seen.find(lower);
  if (known != l.seen.end()) return known->second;
  bool is = m_.stems.count(l.stem(lower)) > 0;
  l.seen.emplace(std::move(lower), is);
  return is;
}

std::string snippet_maker::of(std::string_view text, const std::string& language, std::size_t length) {
  auto at_language = languages_.find(language);
  if (at_language == languages_.end()) {
    auto stem = stemmer_for(language);
    bool kept = keeps_first_letter(stem);
    at_language = languages_.emplace(language, language_state{std::move(stem), kept, {}}).first;
  }
  auto& lang = at_language->second;
  struct span {
    std::size_t begin, end;
  };
  std::vector<span> marks;
  std::size_t start = 0, stop = std::min(text.size(), length);
  bool anchored = false;
  for (std::size_t i = 0; i < text.size();) {
    if (!word_byte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    auto j = i;
    while (j < text.size() && word_byte(static_cast<unsigned char>(text[j]))) ++j;
    if (anchored && j > stop) break;
    if (marked(text.substr(i, j - i), lang)) {
      if (!anchored) {
        // The window opens a little before the first marked word, at a word's start.
        anchored = true;
        start = i > length / 4 ? i - length / 4 : 0;
        while (start > 0 && start < i && word_byte(static_cast<unsigned char>(text[start - 1]))) ++start;
        stop = std::min(text.size(), start + length);
      }
      marks.push_back({i, j});
    }
    i = j;
  }
  // Cut at a word's end, never inside a UTF-8 sequence.
  if (stop < text.size()) {
    auto cut = stop;
    while (cut > start && word_byte(static_cast<unsigned char>(text[cut - 1])) && word_byte(static_cast<unsigned char>(text[cut])))
      --cut;
    if (cut == start) {
      cut = stop;
      while (cut > start && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    }
    stop = cut;
  }
  std::string out;
  if (start > 0) out += "\u2026";
  auto at = start;
  for (const auto& mk : marks) {
    if (mk.begin < start || mk.end > stop) continue;
    out.append(text, at, mk.begin - at);
    out += "\u00ab";
    out.append(text, mk.begin, mk.end - mk.begin);
    out += "\u00bb";
    at = mk.end;
  }
  out.append(text, at, stop - at);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  if (stop < text.size()) out += "\u2026";
  return out;
}

}  // namespace cl::storage::search_detail
