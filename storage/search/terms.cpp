#include "storage/search/terms.hpp"

#include "storage/search/types.hpp"
#include "storage/search/shard_documents.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>
#include <unordered_map>

namespace cl::storage::search_detail {

namespace {

/// `text` with every NEAR and ADJ operator (any case, `/N` or not, outside quotes) turned into the
/// quoted word: they are not operators of this API. Xapian 1.4's parser leaks memory on some of
/// their uses (`-a NEAR b/c`: 192 bytes a search, found by fuzzing), and a request must not be able
/// to grow the process.
std::string without_proximity_operators(const std::string& text) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  auto word_at = [&](std::size_t i, std::string_view word) {
    if (text.size() - i < word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(text[i + k])) != word[k]) return false;
    // A whole word: Xapian takes any other byte (space, punctuation, a control or non-ASCII
    // character) as the operator's boundary.
    return (i == 0 || !alnum(text[i - 1])) && (i + word.size() == text.size() || !alnum(text[i + word.size()]));
  };
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') quoted = !quoted;
    std::size_t length = quoted ? 0 : word_at(i, "near") ? 4 : word_at(i, "adj") ? 3 : 0;
    if (length == 0) {
      out.push_back(text[i++]);
      continue;
    }
    out += "\"" + text.substr(i, length) + "\"";
    i += length;
    if (i < text.size() && text[i] == '/') {  // NEAR/3: the distance goes with the operator
      ++i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    }
  }
  return out;
}

constexpr unsigned parse_flags = Xapian::QueryParser::FLAG_PHRASE | Xapian::QueryParser::FLAG_BOOLEAN |
                                 Xapian::QueryParser::FLAG_LOVEHATE | Xapian::QueryParser::FLAG_BOOLEAN_ANY_CASE;

}  // namespace

std::string unique_term(const std::string& tenant, const std::string& id) {
  return "Q" + tenant + std::string(1, '\0') + id;
}

/// Xapian's stemmer for a language code; none (no stemming) for an unknown or absent language.
Xapian::Stem stemmer_for(const std::string& language) {
  if (language.empty()) return Xapian::Stem{};
  try {
    return Xapian::Stem{language.substr(0, language.find('-'))};
  } catch (const Xapian::Error&) {
    return Xapian::Stem{};
  }
}

/// Which stemmer a document's words went through: its language's (`en` for `en-GB`), or `none`.
/// Documents carry it as the boolean term `XK<key>`; a query is parsed once per key, each parse
/// matched only against documents stemmed the same way.
std::string stem_key(const std::string& language) {
  if (stemmer_for(language).is_none()) return "none";
  return language.substr(0, language.find('-'));
}


Xapian::termcount wdf_per_occurrence(std::size_t words) {
  double norm = 1 - bm25_b + bm25_b * std::max(static_cast<double>(words) / reference_words, 0.5);
  return static_cast<Xapian::termcount>(std::max(1.0, std::round(wdf_scale / norm)));
}

Xapian::BM25Weight ranking() {
  return Xapian::BM25Weight(bm25_k1 * wdf_scale, 0, 1, 0, 0.5);
}


/// The term of two words (text terms) standing next to each other, in that order.
std::string pair_term(const std::string& first, const std::string& second) {
  return "XP" + first + " " + second;
}

/// A term of the text: a `Z` stem or a word as written (prefixed terms are titles only or filters).
bool text_term(const std::string& term) {
  if (term.empty()) return false;
  if (term[0] == 'Z') return term.size() > 1 && !(term[1] >= 'A' && term[1] <= 'Z');
  return !(term[0] >= 'A' && term[0] <= 'Z');
}

/// The common words as metadata: their number, then each on a line of its own ("0" when none
/// qualified: chosen all the same, so that the choice is not made again every batch).
std::string join_terms(const term_set& terms) {
  std::vector<std::string> sorted(terms.begin(), terms.end());
  std::sort(sorted.begin(), sorted.end());
  std::string out = std::to_string(sorted.size());
  for (const auto& t : sorted) out += "\n" + t;
  return out;
}

term_set split_terms(const std::string& joined) {
  term_set terms;
  std::size_t start = joined.find('\n');
  start = start == std::string::npos ? joined.size() : start + 1;
  while (start < joined.size()) {
    auto end = joined.find('\n', start);
    if (end == std::string::npos) end = joined.size();
    if (end > start) terms.insert(joined.substr(start, end - start));
    start = end + 1;
  }
  return terms;
}


std::string tier_term(int level, const std::string& term) {
  return "XI" + std::string(1, static_cast<char>('0' + level)) + term;
}

static Xapian::termcount tier_floor(int level) {
  return static_cast<Xapian::termcount>(wdf_scale) << level;
}

/// The levels a term of `wdf` is indexed at, as boolean terms of `doc`.
static void add_tiers(Xapian::Document& doc, const std::string& term, Xapian::termcount wdf) {
  for (int level = 1; level <= max_tier && wdf >= tier_floor(level); ++level) doc.add_boolean_term(tier_term(level, term));
}

/// Adds to `doc` a pair term for every two neighbouring positions holding words of `common`,
/// weighted per occurrence as the document's words are (their wdf over their positions), and the
/// impact tiers of those words and pairs.
void add_pairs(Xapian::Document& doc, const term_set& common) {
  std::vector<std::pair<Xapian::termpos, const std::string*>> at;
  std::vector<std::pair<const std::string*, Xapian::termcount>> words;  // common words and their wdf
  Xapian::termcount inc = 0;
  for (auto t = doc.termlist_begin(); t != doc.termlist_end(); ++t) {
    auto found = common.find(*t);
    if (found == common.end()) continue;
    words.emplace_back(&*found, t.get_wdf());
    Xapian::termcount occurrences = 0;
    for (auto p = t.positionlist_begin(); p != t.positionlist_end(); ++p, ++occurrences) at.emplace_back(*p, &*found);
    if (inc == 0 && occurrences > 0) inc = std::max<Xapian::termcount>(1, t.get_wdf() / occurrences);
  }
  std::sort(at.begin(), at.end());
  std::vector<std::pair<const std::string*, const std::string*>> pairs;
  for (std::size_t i = 0; i + 1 < at.size(); ++i)
    if (at[i + 1].first == at[i].first + 1) pairs.emplace_back(at[i].second, at[i + 1].second);
  std::sort(pairs.begin(), pairs.end());
  for (std::size_t i = 0; i < pairs.size();) {  // each pair once, with all its occurrences
    auto j = i;
    while (j < pairs.size() && pairs[j] == pairs[i]) ++j;
    auto term = pair_term(*pairs[i].first, *pairs[i].second);
    auto wdf = inc * static_cast<Xapian::termcount>(j - i);
    doc.add_term(term, wdf);
    add_tiers(doc, term, wdf);
    i = j;
  }
  for (const auto& [word, wdf] : words) add_tiers(doc, *word, wdf);
}

std::string pair_bucket_term(std::uint32_t first, std::uint32_t second) {
  auto mixed = ((static_cast<std::uint64_t>(first) << 32) | second) * 0x9E3779B97F4A7C15ull;
  auto bucket = static_cast<unsigned>(mixed >> (64 - pair_bucket_bits));
  static constexpr char hex[] = "0123456789abcdef";
  std::string term = "XB";
  for (int shift = (pair_bucket_bits - 1) / 4 * 4; shift >= 0; shift -= 4) term += hex[(bucket >> shift) & 15];
  return term;
}

void add_pair_buckets(Xapian::Document& doc, const std::vector<std::uint32_t>& sequence) {
  for (std::size_t i = 0; i + 1 < sequence.size(); ++i)
    if (sequence[i] != 0 && sequence[i + 1] != 0)  // a gap stands between no two words
      doc.add_boolean_term(pair_bucket_term(sequence[i], sequence[i + 1]));
}

/// `doc`'s positioned terms in position order, as word hashes; a 0 wherever positions skip (between
/// title and text). What storage/search/shard_documents.hpp keeps.
std::vector<std::uint32_t> sequence_of(const Xapian::Document& doc) {
  std::vector<std::pair<Xapian::termpos, std::uint32_t>> at;
  for (auto t = doc.termlist_begin(); t != doc.termlist_end(); ++t) {
    auto p = t.positionlist_begin();
    if (p == t.positionlist_end()) continue;
    auto h = word_hash(*t);
    for (; p != t.positionlist_end(); ++p) at.emplace_back(*p, h);
  }
  std::sort(at.begin(), at.end());
  std::vector<std::uint32_t> words;
  words.reserve(at.size() + 2);
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (i > 0 && at[i].first != at[i - 1].first + 1) words.push_back(0);
    words.push_back(at[i].second);
  }
  return words;
}

/// The common words of `shards` (as they stand before commit): text terms in at least
/// `common_share` of their `documents`, the most frequent first, at most `max_common_terms`.
term_set choose_common(const std::vector<const Xapian::Database*>& shards, Xapian::doccount documents) {
  std::unordered_map<std::string, Xapian::doccount> df;
  for (const auto& s : shards)
    for (auto t = s->allterms_begin(); t != s->allterms_end(); ++t)
      if (text_term(*t)) df[*t] += t.get_termfreq();
  std::vector<std::pair<Xapian::doccount, std::string>> frequent;
  for (auto& [term, n] : df)
    if (static_cast<double>(n) >= common_share * documents) frequent.emplace_back(n, term);
  std::sort(frequent.begin(), frequent.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (frequent.size() > max_common_terms) frequent.resize(max_common_terms);
  term_set common;
  for (auto& f : frequent) common.insert(std::move(f.second));
  return common;
}

/// Gives every document of `db` its pairs of `common` words (once, when they are chosen).
void pair_existing(Xapian::WritableDatabase& db, const term_set& common) {
  std::vector<Xapian::docid> ids;
  for (auto p = db.postlist_begin(""); p != db.postlist_end(""); ++p) ids.push_back(*p);
  for (auto did : ids) {
    auto doc = db.get_document(did);
    auto first = doc.termlist_begin();
    first.skip_to("XP");
    if (first != doc.termlist_end() && (*first).rfind("XP", 0) == 0) continue;  // indexed with them already
    add_pairs(doc, common);
    db.replace_document(did, doc);
  }
}

/// `q` with every exact phrase of two common words (`"a b"`, also `a ADJ/1 b` and `a-b`) as their
/// pair term: the same documents (a pair is indexed wherever the two words stand together in a
/// text), ranked by the pair's own BM25 weight. Other phrases (three words and more, a window,
/// titles) and operators it cannot rebuild as they were are left as they are.
Xapian::Query with_pairs(const Xapian::Query& q, const term_set& common) {
  using Q = Xapian::Query;
  auto n = q.get_num_subqueries();
  if (n == 0 || common.empty()) return q;
  switch (q.get_type()) {
    case Q::OP_PHRASE: {
      if (n != 2 || q.get_description().find(" PHRASE 2 ") == std::string::npos) return q;
      auto a = q.get_subquery(0), b = q.get_subquery(1);
      if (a.get_type() != Q::LEAF_TERM || b.get_type() != Q::LEAF_TERM) return q;
      std::string first = *a.get_terms_begin(), second = *b.get_terms_begin();
      if (!common.count(first) || !common.count(second)) return q;
      return Q(pair_term(first, second));
    }
    case Q::OP_AND:
    case Q::OP_OR:
    case Q::OP_AND_NOT:
    case Q::OP_XOR:
    case Q::OP_AND_MAYBE:
    case Q::OP_FILTER:
    case Q::OP_MAX: {
      std::vector<Q> subs;
      for (std::size_t i = 0; i < n; ++i) subs.push_back(with_pairs(q.get_subquery(i), common));
      return Q(q.get_type(), subs.begin(), subs.end());
    }
    default:
      return q;
  }
}

std::size_t count_words(const std::string& text) {
  std::size_t words = 0;
  bool in_word = false;
  for (unsigned char c : text) {
    bool w = word_byte(c);
    if (w && !in_word) ++words;
    in_word = w;
  }
  return words;
}


/// `text` parsed for `db` once per stemmer its documents went through (`keys`), in that order:
/// words are stemmed as the documents' were (`tide` finds `tides` in English and `marée` finds
/// `marées` in French, in one search), or taken as written where no stemmer applies.
/// `title_only`: unprefixed words match titles only (the metadata a refused caller may match on).
std::vector<Xapian::Query> parse_each(const Xapian::Database& db, const std::string& text, const std::vector<std::string>& keys,
                                      bool title_only) {
  std::vector<Xapian::Query> parses;
  try {
    for (const auto& key : keys) {
      Xapian::QueryParser parser;
      parser.set_database(db);
      parser.set_default_op(Xapian::Query::OP_AND);
      parser.add_prefix("title", "S");
      if (title_only) parser.add_prefix("", "S");
      if (key != "none") {
        parser.set_stemmer(Xapian::Stem{key});
        parser.set_stemming_strategy(Xapian::QueryParser::STEM_ALL_Z);
      }
      parses.push_back(parser.parse_query(without_proximity_operators(text), parse_flags));
    }
  } catch (const Xapian::QueryParserError& e) {
    throw query_syntax_error{e.get_msg()};
  }
  return parses;
}

/// The parses of `parse_each` as one query, each limited to the documents stemmed its way.
Xapian::Query combine(const std::vector<Xapian::Query>& parses, const std::vector<std::string>& keys) {
  if (parses.size() == 1) return parses.front();
  std::vector<Xapian::Query> branches;
  for (std::size_t i = 0; i < parses.size(); ++i)
    branches.emplace_back(Xapian::Query::OP_FILTER, parses[i], Xapian::Query("XK" + keys[i]));
  return Xapian::Query(Xapian::Query::OP_OR, branches.begin(), branches.end());
}

Xapian::Query parse(const Xapian::Database& db, const std::string& text, const std::vector<std::string>& keys, bool title_only) {
  return combine(parse_each(db, text, keys, title_only), keys);
}

/// The stemmer keys a search needs: those of the languages it filters on, else every key the
/// index holds (a handful of boolean terms).
std::vector<std::string> stem_keys(const std::vector<std::string>& index_keys, const std::vector<std::string>& languages) {
  std::set<std::string> keys;
  for (const auto& l : languages) keys.insert(stem_key(l));
  if (languages.empty()) keys.insert(index_keys.begin(), index_keys.end());
  if (keys.empty()) keys.insert("none");
  return {keys.begin(), keys.end()};
}


}  // namespace cl::storage::search_detail
