#include "storage/search_index.hpp"

#include "storage/shard_documents.hpp"

#include <xapian.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <stdexcept>

namespace cl::storage {

namespace {

constexpr const char* applied_key = "applied";
/// A rebuild in progress: the sequence it completes at, and the last record-store key it indexed.
constexpr const char* rebuild_target_key = "rebuild_target";
constexpr const char* rebuild_after_key = "rebuild_after";

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

/// The index format: documents without what a search relies on (the `XK` terms; from 8 the words
/// and records beside each shard, no value slot; from 10 the impact tiers; from 11 the sketches
/// in blocks) are rebuilt.
constexpr const char* format_key = "format";
constexpr const char* format_version = "12";

/// Ranking: BM25 with its length normalisation applied when a document is indexed, not when a
/// query runs. Xapian's BM25 reads every candidate's length from a chunked list it decodes from
/// the chunk's start (0.7 of 0.9 ms of a one-word query at 100,000 documents, growing with the
/// documents held). Instead each occurrence counts `wdf_scale / norm` (norm = 1 - b + b *
/// max(words / reference_words, 0.5), BM25's own form with b = 0.5, Xapian's default), and
/// queries run BM25 with b = 0 (no length read) and k1 scaled alike: the same ranking as BM25 with
/// a fixed average length of `reference_words`, up to one factor common to every weight.
constexpr double bm25_b = 0.5;
constexpr double bm25_k1 = 1.0;
constexpr double reference_words = 500;
constexpr double wdf_scale = 256;

/// Words in `text` as a plain scan counts them (runs of letters and digits).
std::size_t count_words(const std::string& text);

Xapian::termcount wdf_per_occurrence(std::size_t words) {
  double norm = 1 - bm25_b + bm25_b * std::max(static_cast<double>(words) / reference_words, 0.5);
  return static_cast<Xapian::termcount>(std::max(1.0, std::round(wdf_scale / norm)));
}

Xapian::BM25Weight ranking() {
  return Xapian::BM25Weight(bm25_k1 * wdf_scale, 0, 1, 0, 0.5);
}

/// Word pairs, for phrases of common words. A phrase of two words found in most documents cost a
/// check of positions for most of them (14 ms p95 in process at 100,000 documents, 20 ms for the
/// worst); the pair's own posting list costs what a one-word query does. Only pairs of two common
/// words are indexed: a phrase with a rarer word is driven by that word's short posting list.
/// The common words are chosen once, from the index's own statistics when it first holds
/// `pairs_from_documents` documents (text terms in at least `common_share` of them, at most
/// `max_common_terms`), kept in every shard's metadata `common_terms`, and the documents already
/// held are given their pairs in the same commit; from then on every document gets its pairs as
/// it is indexed. A word that becomes common later is not added (its phrases are checked against
/// the word sequences, as before); a rebuild (`contentlake reindex`) chooses again. The share
/// trades indexing for phrases (100,000 generated documents, in process): 10% indexed ~25% slower
/// than without pairs with phrase p95 3.9 ms; 25% ~15% slower, 5.1 ms; 40% ~10% slower, 6.2 ms;
/// none 14.2 ms (checked by position). With phrases checked against the word sequences
/// (shard_documents), 25 -> 10% cost indexing 1,094 -> 1,052 docs/s and took phrase p95 from 7.3 to
/// 4.6 ms (p50 1.28 -> 0.85): the costly phrases left were a word in 15-25% of the documents with
/// one in most, 10,000-20,000 candidates each checked (no page fills by weight to stop at); 5%
/// filled the 256 words and indexed at 931 docs/s for no better phrases. A phrase of two words in
/// nearly every document costs what one such word does (~8 ms).
constexpr const char* common_terms_key = "common_terms";
constexpr Xapian::doccount pairs_from_documents = 1000;
constexpr double common_share = 0.10;
constexpr std::size_t max_common_terms = 256;
using term_set = std::unordered_set<std::string>;

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

/// Impact tiers, for a query that is one common word or one pair (`"a b"` of two common words):
/// ranked by BM25 alone, whose weight grows with the wdf only (b = 0 above), so its best documents
/// are those with the largest wdf. Such a list holds most documents (83,000 of 100,000 for the
/// densest pair), and Xapian reads all of it to find a page (3.6 ms in process). Each common word
/// and pair of a document is also indexed as boolean terms `XI<level><term>` for every level L
/// whose floor, `wdf_scale << L`, its wdf reaches (L = 1: about two occurrences in a document of
/// reference length; each level doubles it). A search first ranks the term's documents of one
/// level: when that fills its window, nothing outside the level can outrank them (their wdf is
/// lower, so is their weight) and the answer is exactly the whole list's. Else it goes a level
/// down, and to the whole list last.
constexpr int max_tier = 9;

std::string tier_term(int level, const std::string& term) {
  return "XI" + std::string(1, static_cast<char>('0' + level)) + term;
}

Xapian::termcount tier_floor(int level) {
  return static_cast<Xapian::termcount>(wdf_scale) << level;
}

/// The levels a term of `wdf` is indexed at, as boolean terms of `doc`.
void add_tiers(Xapian::Document& doc, const std::string& term, Xapian::termcount wdf) {
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

/// `doc`'s positioned terms in position order, as word hashes; a 0 wherever positions skip (between
/// title and text). What storage/shard_documents.hpp keeps.
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
template <class Shards>
term_set choose_common(const Shards& shards, Xapian::doccount documents) {
  std::unordered_map<std::string, Xapian::doccount> df;
  for (const auto& s : shards)
    for (auto t = s->db.allterms_begin(); t != s->db.allterms_end(); ++t)
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

/// A hit's record (what it shows, kept in the shard's documents: storage/shard_documents.hpp): id,
/// title, type, language, work id, text, NUL-separated.
std::string encode(const indexed_resource& r) {
  std::string out;
  for (const auto* f : {&r.id, &r.title, &r.type, &r.language, &r.work_id, &r.text}) {
    out += *f;
    out.push_back('\0');
  }
  return out;
}

std::array<std::string_view, 6> decode(std::string_view data) {
  std::array<std::string_view, 6> fields;
  std::size_t start = 0, i = 0;
  for (auto nul = data.find('\0'); nul != std::string_view::npos && i < fields.size(); nul = data.find('\0', start)) {
    fields[i++] = data.substr(start, nul - start);
    start = nul + 1;
  }
  return fields;
}

/// The words a query looks for, to mark in snippets: as written (lower case) and stemmed (the
/// query's `Z` terms). Title-only (`S`) and filter (`X`) terms are not marked in the text.
struct marked_terms {
  std::unordered_set<std::string> raw, stems;
  std::string stem_starts;  ///< first letters of the stems: words starting otherwise are never stemmed
};

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

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
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

/// Whether `word` (as it stands in the text) is one the query looks for.
bool marked(std::string_view word, const marked_terms& m, const Xapian::Stem& stem) {
  std::string lower{word};
  bool ascii = true;
  for (auto& c : lower) {
    if (static_cast<unsigned char>(c) >= 0x80) ascii = false;
    else if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!ascii) lower = Xapian::Unicode::tolower(lower);
  if (m.raw.count(lower)) return true;
  // Stemming costs: only words whose first letter starts some stem of the query.
  if (m.stems.empty() || m.stem_starts.find(lower[0]) == std::string::npos) return false;
  return m.stems.count(stem(lower)) > 0;
}

/// Up to about `length` bytes of `text` around its first marked word, plain text (no HTML), each
/// marked word between U+00AB and U+00BB, cuts shown as U+2026. The cost is a scan up to the end of
/// the window, a few stems: not the whole document's analysis.
std::string snippet_of(std::string_view text, const marked_terms& m, const Xapian::Stem& stem, std::size_t length) {
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
    if (marked(std::string_view{text}.substr(i, j - i), m, stem)) {
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

/// Listed documents as a posting list: under `AND_NOT`, those a search passes over (a session's
/// answered hits, hits this answer refused); under `FILTER`, those a query is kept to (a page's
/// hits, for their metadata match: Xapian then reads the query's lists only at these documents,
/// where a decider saw every document the query matched: 12 ms for a title phrase of two common
/// words at 100,000 documents). Each shard's own document ids, sorted. Xapian gives a search of
/// several shards a copy per shard (`clone`), each told its shard in `init`; the copy finds its
/// list by the shard's UUID. A deep page then costs about the first page's price (the ids are
/// remembered from the answers: `impl::known`; looking each up again cost 3.6 ms at page 25 of a
/// session at 100,000 documents): an `OR` of the ids' unique terms cost a statistics lookup and a
/// posting list per term and shard (12 ms at page 25, against 1 ms for page 1), and a decider a
/// value read per ranked candidate (4.5 ms from page 2 on).
class document_list final : public Xapian::PostingSource {
public:
  /// Per shard: its UUID and its sorted document ids to pass over.
  using lists = std::vector<std::pair<std::string, std::vector<Xapian::docid>>>;
  explicit document_list(std::shared_ptr<const lists> by_shard) : by_shard_(std::move(by_shard)) {}

  void init(const Xapian::Database& db) override {
    ids_ = nullptr;
    auto uuid = db.get_uuid();
    for (const auto& [shard, ids] : *by_shard_)
      if (shard == uuid) ids_ = &ids;
    at_ = 0;
    started_ = false;
  }
  Xapian::doccount get_termfreq_min() const override { return size(); }
  Xapian::doccount get_termfreq_est() const override { return size(); }
  Xapian::doccount get_termfreq_max() const override { return size(); }
  Xapian::docid get_docid() const override { return (*ids_)[at_]; }
  bool at_end() const override { return !ids_ || at_ >= ids_->size(); }
  void next(double) override {
    if (started_) ++at_;
    started_ = true;
  }
  void skip_to(Xapian::docid did, double) override {
    if (!ids_) return;
    started_ = true;
    at_ = static_cast<std::size_t>(std::lower_bound(ids_->begin() + static_cast<std::ptrdiff_t>(at_), ids_->end(), did) -
                                   ids_->begin());
  }
  Xapian::PostingSource* clone() const override { return new document_list(by_shard_); }

private:
  Xapian::doccount size() const { return ids_ ? static_cast<Xapian::doccount>(ids_->size()) : 0; }
  std::shared_ptr<const lists> by_shard_;
  const std::vector<Xapian::docid>* ids_ = nullptr;
  std::size_t at_ = 0;
  bool started_ = false;
};

/// The documents of one shard revision that hold a boolean term, one bit each (bit `did`), kept
/// for the searches after the first that asks: a search's filters (tenant, readers, type,
/// language, work) are read from these instead of their posting lists. Xapian moves through a
/// filter's list to every candidate, decoding it from the start of its chunk: a filter that most
/// documents pass (a tenant's own, a reader's own documents) was read and decoded whole by every
/// search, however few candidates it had (a third of a one-word search's time at 100,000
/// documents, half of what it read). A set is built once per term and revision, from its list,
/// and tested in a step. Bounded by `max_bytes` (1 bit a document a term; emptied when full).
class filter_sets {
public:
  using bits = std::vector<std::uint64_t>;
  static constexpr std::size_t max_bytes = std::size_t{64} << 20;

  /// The set of `term` in `db` (one shard) at its revision.
  std::shared_ptr<const bits> of(const Xapian::Database& db, const std::string& term) {
    auto key = db.get_uuid() + '\n' + std::to_string(db.get_revision()) + '\n' + term;
    {
      std::lock_guard lock{mutex_};
      if (auto found = sets_.find(key); found != sets_.end()) return found->second;
    }
    auto set = std::make_shared<bits>(db.get_lastdocid() / 64 + 1, 0);
    for (auto p = db.postlist_begin(term); p != db.postlist_end(term); ++p) (*set)[*p / 64] |= std::uint64_t{1} << (*p % 64);
    std::lock_guard lock{mutex_};
    auto size = set->size() * sizeof(std::uint64_t);
    if (bytes_ + size > max_bytes) {
      sets_.clear();
      bytes_ = 0;
    }
    if (sets_.emplace(std::move(key), set).second) bytes_ += size;
    return set;
  }

private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const bits>> sets_;
  std::size_t bytes_ = 0;
};

/// A search's filters as one posting source: the documents that hold, for every group, at least
/// one of its terms (AND of ORs), computed per shard in `init` from `filter_sets` (a word of 64
/// documents a step), then walked bit by bit. Weightless, as a boolean filter is.
class filter_source final : public Xapian::PostingSource {
public:
  using groups = std::vector<std::vector<std::string>>;
  filter_source(std::shared_ptr<filter_sets> sets, std::shared_ptr<const groups> terms)
      : sets_(std::move(sets)), terms_(std::move(terms)) {}

  void init(const Xapian::Database& db) override {
    auto words = static_cast<std::size_t>(db.get_lastdocid() / 64 + 1);
    bits_.assign(words, ~std::uint64_t{0});
    bits_[0] &= ~std::uint64_t{1};  // there is no document 0
    for (const auto& group : *terms_) {
      filter_sets::bits any(words, 0);
      for (const auto& term : group) {
        auto set = sets_->of(db, term);
        for (std::size_t i = 0; i < words && i < set->size(); ++i) any[i] |= (*set)[i];
      }
      for (std::size_t i = 0; i < words; ++i) bits_[i] &= any[i];
    }
    count_ = 0;
    for (auto w : bits_) count_ += static_cast<Xapian::doccount>(__builtin_popcountll(w));
    end_ = static_cast<Xapian::docid>(words * 64);
    current_ = 0;
    held_ = true;
  }
  Xapian::doccount get_termfreq_min() const override { return count_; }
  Xapian::doccount get_termfreq_est() const override { return count_; }
  Xapian::doccount get_termfreq_max() const override { return count_; }
  Xapian::docid get_docid() const override { return current_; }
  bool at_end() const override { return current_ >= end_; }
  void next(double) override {
    current_ = from(current_ + 1);
    held_ = true;
  }
  void skip_to(Xapian::docid did, double) override {
    if (did > current_ || !held_) current_ = from(std::max(did, current_));
    held_ = true;
  }
  bool check(Xapian::docid did, double) override {
    current_ = std::max(did, current_);
    held_ = current_ < end_ && ((bits_[current_ / 64] >> (current_ % 64)) & 1);
    return held_;  // false: not in the set, and the next move goes on from here (Xapian's contract)
  }
  Xapian::PostingSource* clone() const override { return new filter_source(sets_, terms_); }

private:
  /// The first document at or after `did` in the set (end_ if none).
  Xapian::docid from(Xapian::docid did) const {
    if (did >= end_) return end_;
    std::size_t i = did / 64;
    auto w = bits_[i] & (~std::uint64_t{0} << (did % 64));
    while (w == 0) {
      if (++i == bits_.size()) return end_;
      w = bits_[i];
    }
    return static_cast<Xapian::docid>(i * 64 + static_cast<std::size_t>(__builtin_ctzll(w)));
  }
  std::shared_ptr<filter_sets> sets_;
  std::shared_ptr<const groups> terms_;
  filter_sets::bits bits_;
  Xapian::doccount count_ = 0;
  Xapian::docid current_ = 0, end_ = 0;
  bool held_ = false;  ///< current_ is in the set (else a check left it there, undecided)
};

/// How much of the index a search's filters let through: the product of each group's share (as
/// if they were independent), and whether every group holds at least a 64th of the documents.
struct filter_reach {
  double share = 1;
  bool dense = true;
};

filter_reach reach_of(const Xapian::Database& db, const filter_source::groups& groups) {
  auto documents = db.get_doccount();
  filter_reach reach;
  for (const auto& group : groups) {
    Xapian::doccount held = 0;
    for (const auto& term : group) held += db.get_termfreq(term);
    reach.dense = reach.dense && std::uint64_t{held} * 64 >= documents;
    reach.share *= documents == 0 ? 0.0 : std::min(1.0, static_cast<double>(held) / documents);
  }
  return reach;
}

/// A search's filters (`groups`: an AND of ORs of terms) as a query. As bit sets (filter_source)
/// when every group holds at least a 64th of the documents: a set costs a word per 64 documents
/// to combine, which only dense filters repay. Else as Xapian's boolean terms, which Xapian drives
/// by the shortest list (a small tenant's, in a large index): the work asked, not the index's size.
Xapian::Query filters_of(const std::shared_ptr<filter_sets>& sets,
                         const std::shared_ptr<const filter_source::groups>& groups, const filter_reach& reach) {
  if (reach.dense) {
    filter_source filtered{sets, groups};
    return Xapian::Query(filtered.clone()->release());
  }
  std::vector<Xapian::Query> all;
  for (const auto& group : *groups) {
    std::vector<Xapian::Query> any(group.begin(), group.end());
    all.emplace_back(Xapian::Query::OP_OR, any.begin(), any.end());
  }
  return Xapian::Query(Xapian::Query::OP_AND, all.begin(), all.end());
}

/// `prefix` before each of `values`: a filter group.
std::vector<std::string> prefixed(const std::string& prefix, const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(prefix + v);
  return out;
}

/// Xapian numbers the documents of `n` shards searched as one by interleaving them: document
/// `local` of shard `k` is `(local - 1) * n + k + 1`. These go between the two numberings.
struct shard_docid {
  std::size_t shard;
  Xapian::docid local;
};
shard_docid split_docid(Xapian::docid merged, std::size_t n) {
  return {(merged - 1) % n, static_cast<Xapian::docid>((merged - 1) / n + 1)};
}
Xapian::docid merge_docid(Xapian::docid local, std::size_t k, std::size_t n) {
  return static_cast<Xapian::docid>((local - 1) * n + k + 1);
}

/// Which shard holds a Resource: FNV-1a of (tenant, id), stable across builds and machines (the
/// shard a document went to must be the one a later replace or removal finds it in).
std::size_t shard_of(const std::string& tenant, const std::string& id, std::size_t shards) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](unsigned char c) { h = (h ^ c) * 1099511628211ull; };
  for (unsigned char c : tenant) mix(c);
  mix(0);
  for (unsigned char c : id) mix(c);
  return static_cast<std::size_t>(h % shards);
}

std::filesystem::path shard_path(const std::filesystem::path& dir, std::size_t k) {
  return dir / ("shard-" + std::to_string(k));
}

/// The shard directories present under `dir`.
std::size_t shard_dirs(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("shard-", 0) == 0) ++n;
  return n;
}

/// The stemmer keys the index holds (its `XK` terms).
std::vector<std::string> index_keys_of(const Xapian::Database& db) {
  std::vector<std::string> keys;
  for (auto t = db.allterms_begin("XK"); t != db.allterms_end("XK"); ++t) keys.push_back((*t).substr(2));
  return keys;
}

using metadata_list = std::vector<std::pair<std::string, std::string>>;

/// Builds and writes one shard's part of a batch, with the applied sequence and `metadata` (not
/// committed yet).
void write_shard(Xapian::WritableDatabase& db, shard_documents& documents,
                 const std::vector<const indexed_resource*>& upserts,
                 const std::vector<const std::pair<std::string, std::string>*>& removed, std::uint64_t applied_seq,
                 const metadata_list& metadata, const term_set& common) {
  Xapian::TermGenerator terms;
  for (const auto* r : upserts) {
    Xapian::Document doc;
    terms.set_document(doc);
    auto stemmer = stemmer_for(r->language);
    terms.set_stemmer(stemmer);
    // Stems only where a stemmer applies; words as written otherwise (what a `none` parse looks for).
    terms.set_stemming_strategy(stemmer.is_none() ? Xapian::TermGenerator::STEM_NONE : Xapian::TermGenerator::STEM_ALL_Z);
    auto inc = wdf_per_occurrence(count_words(r->title) + count_words(r->text));
    // The title's own terms weigh by the title alone: a caller whose rights refuse the content is
    // ranked by them, so nothing of the content (not even its length) may move their weight.
    terms.index_text(r->title, wdf_per_occurrence(count_words(r->title)), "S");
    terms.index_text(r->title, inc);
    terms.increase_termpos();
    terms.index_text(r->text, inc);
    if (!common.empty()) add_pairs(doc, common);
    auto unique = unique_term(r->tenant, r->id);
    doc.add_boolean_term(unique);
    doc.add_boolean_term("XT" + r->tenant);
    if (!r->type.empty()) doc.add_boolean_term("XY" + r->type);
    if (!r->language.empty()) doc.add_boolean_term("XL" + r->language);
    doc.add_boolean_term("XK" + stem_key(r->language));
    doc.add_boolean_term(r->work_id.empty() ? "XS1" : "XS0");
    if (!r->work_id.empty()) doc.add_boolean_term("XW" + r->work_id);
    for (const auto& p : r->readers) doc.add_boolean_term("XR" + p);
    auto did = db.replace_document(unique, doc);
    documents.put(did, word_hash(stem_key(r->language)), sequence_of(doc), encode(*r));
  }
  for (const auto* key : removed) {
    auto unique = unique_term(key->first, key->second);
    if (auto at = db.postlist_begin(unique); at != db.postlist_end(unique)) documents.erase(*at);
    db.delete_document(unique);
  }
  db.set_metadata(applied_key, std::to_string(applied_seq));
  db.set_metadata(format_key, format_version);
  for (const auto& [key, value] : metadata) db.set_metadata(key, value);
}

/// Runs `work(k)` for every shard k, the others on threads of their own; rethrows the first failure
/// once all are done.
template <class Work>
void on_every_shard(std::size_t shards, const Work& work) {
  std::vector<std::future<void>> others;
  for (std::size_t k = 1; k < shards; ++k) others.push_back(std::async(std::launch::async, work, k));
  std::exception_ptr failed;
  try {
    work(0);
  } catch (...) {
    failed = std::current_exception();
  }
  for (auto& f : others) {
    try {
      f.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

struct search_index::impl {
  /// One Xapian database of the index: its own writer, lock and commits, so shards index in
  /// parallel (a Xapian writer is single-threaded: one database was the index's ceiling).
  struct shard {
    shard(const std::filesystem::path& p, const std::filesystem::path& w)
        : path(p.string()), db(path, Xapian::DB_CREATE_OR_OPEN), documents(w) {}
    std::string path;
    std::mutex mutex;  ///< Xapian objects are not thread-safe: one user at a time
    Xapian::WritableDatabase db;
    shard_documents documents;
    bool paired = false;  ///< its documents have their pairs of the common words (committed)
  };
  /// The filters' document sets, shared by every search (storage/search_index.cpp: filter_sets).
  std::shared_ptr<filter_sets> filters = std::make_shared<filter_sets>();

  /// A read-only view of every shard for one search at a time, current as of the last commit.
  struct reader {
    std::unique_ptr<Xapian::Database> db;  ///< every shard, as one
    std::vector<Xapian::Database> shards;  ///< each shard alone (sharing `db`'s state: reopened with it)
    std::uint64_t generation = 0;
    /// The stemmer keys (`XK`) the index holds at this generation: listing them reads ~50 blocks.
    std::vector<std::string> keys;
    /// The common words whose pairs every shard holds at this generation (empty: none yet).
    term_set common;
    /// Each shard's documents (words, records): a read transaction, renewed at checkout (after `db`
    /// is brought to the last commit, so it holds at least what `db` does) and released when idle.
    std::vector<shard_documents::reader> documents;
  };

  /// Takes an idle reader (or opens one) and brings it to the last commit.
  reader checkout() const {
    reader r;
    {
      std::lock_guard lock{pool_mutex};
      if (!idle.empty()) {
        r = std::move(idle.back());
        idle.pop_back();
      }
    }
    std::shared_lock opening{commit_mutex};  // not while shards commit (see write)
    auto now = generation.load();
    if (r.db && r.generation == now) {
      for (auto& w : r.documents) w.renew();
      return r;
    }
    if (!r.db) {
      r.db = std::make_unique<Xapian::Database>();
      for (const auto& s : shards) {
        r.shards.emplace_back(s->path);
        r.db->add_database(r.shards.back());
      }
    } else {
      r.db->reopen();
    }
    r.keys = index_keys_of(*r.db);
    r.common = common_of(r.shards);
    r.generation = now;
    if (r.documents.empty())
      for (const auto& s : shards) r.documents.push_back(s->documents.read());
    else
      for (auto& w : r.documents) w.renew();
    return r;
  }
  /// Writes a batch to every shard (with `applied_seq` and `metadata`) and commits them all.
  void write(const std::vector<indexed_resource>& upserts, const std::vector<std::pair<std::string, std::string>>& removed,
             std::uint64_t applied_seq, const metadata_list& metadata) {
    std::vector<std::vector<const indexed_resource*>> ups(shards.size());
    std::vector<std::vector<const std::pair<std::string, std::string>*>> gone(shards.size());
    for (const auto& r : upserts) ups[shard_of(r.tenant, r.id, shards.size())].push_back(&r);
    for (const auto& key : removed) gone[shard_of(key.first, key.second, shards.size())].push_back(&key);
    // Every shard takes its part (its applied sequence moves even when the batch has nothing for
    // it) on a thread of its own: documents are prepared and written in parallel. Then all commit
    // while no reader opens, so that a reader sees a batch in every shard or in none (a search never
    // goes back in time: two readers are never one batch apart the wrong way).
    std::vector<std::unique_lock<std::mutex>> held;
    for (auto& shard : shards) held.emplace_back(shard->mutex);
    // A failure leaves nothing committed; what other shards wrote of the batch is pending and goes
    // with the next commit, which is this batch again (the indexer retries it from the same
    // change): the same documents, rebuilt alike.
    static const term_set none;
    const auto& pairs = common ? *common : none;
    try {
      on_every_shard(shards.size(), [&](std::size_t k) {
        write_shard(shards[k]->db, shards[k]->documents, ups[k], gone[k], applied_seq, metadata, pairs);
      });
    } catch (...) {
      for (auto& shard : shards) shard->documents.abort();  // written again with the batch
      throw;
    }
    // The common words, once there are enough documents to tell them; then (or after a crash
    // between two shards' commits) the documents of every shard without them get their pairs, in
    // this batch's commit.
    if (!common) {
      Xapian::doccount held = 0;
      for (const auto& shard : shards) held += shard->db.get_doccount();
      if (held >= pairs_from_documents) common = choose_common(shards, held);
    }
    std::vector<bool> pairing(shards.size(), false);
    for (std::size_t k = 0; k < shards.size(); ++k) pairing[k] = common && !shards[k]->paired;
    on_every_shard(shards.size(), [&](std::size_t k) {
      if (!pairing[k]) return;
      if (!common->empty()) pair_existing(shards[k]->db, *common);
      shards[k]->db.set_metadata(common_terms_key, join_terms(*common));
    });
    // The documents beside the shards first: a document Xapian holds always has its words and
    // record. A reader may see them ahead of its Xapian revision (a replaced document's newer ones,
    // a removed one's gone: not shown, its phrases checked by position) for the moment a commit takes.
    on_every_shard(shards.size(), [&](std::size_t k) { shards[k]->documents.commit(); });
    std::unique_lock commits{commit_mutex};
    on_every_shard(shards.size(), [&](std::size_t k) { shards[k]->db.commit(); });
    for (std::size_t k = 0; k < shards.size(); ++k)
      if (pairing[k]) shards[k]->paired = true;
    ++generation;
  }

  /// The common words whose pairs every one of `dbs` holds (empty unless all agree).
  static term_set common_of(const std::vector<Xapian::Database>& dbs) {
    std::optional<std::string> agreed;
    for (const auto& db : dbs) {
      auto joined = db.get_metadata(common_terms_key);
      if (joined.empty() || (agreed && *agreed != joined)) return {};
      agreed = joined;
    }
    return agreed ? split_terms(*agreed) : term_set{};
  }

  void give_back(reader r) const {
    for (auto& w : r.documents) w.release();
    std::lock_guard lock{pool_mutex};
    if (idle.size() < 16) idle.push_back(std::move(r));
  }

  std::vector<std::unique_ptr<shard>> shards;
  /// Readers: searches run in parallel, each on its own Database, reopened after commits.
  std::atomic<std::uint64_t> generation{0};
  /// Held by the shards' commits, shared by readers opening: a reader opens between batches.
  mutable std::shared_mutex commit_mutex;
  mutable std::mutex pool_mutex;
  mutable std::vector<reader> idle;
  /// A rebuild is in progress (searches are refused until it completes).
  std::atomic<bool> rebuilding{false};
  /// Document ids of Resources searches answered or passed over (unique term -> id across shards):
  /// a session's next page passes over its answered hits without a lookup each (~5 us: 2.4 ms for
  /// page 25 of 20 hits). Stale after a Resource is removed and indexed again (search runs again).
  mutable std::mutex known_mutex;
  mutable std::unordered_map<std::string, Xapian::docid> known;
  static constexpr std::size_t max_known = 200000;  ///< then forgotten at once (~20 MB)
  using learnt = std::vector<std::pair<std::string, Xapian::docid>>;
  void learn(learnt& found) const {
    if (found.empty()) return;
    std::lock_guard lock{known_mutex};
    for (auto& [term, did] : found) {
      if (known.size() >= max_known) known.clear();
      known[std::move(term)] = did;
    }
  }

  /// The common words documents are given pairs of, once chosen (the writer's, under every shard's
  /// lock).
  std::optional<term_set> common;
};

search_index::search_index(std::filesystem::path dir, std::size_t shards) {
  if (shards == 0) throw std::invalid_argument("a search index needs at least one shard");
  try {
    std::filesystem::create_directories(dir);
    if (std::filesystem::exists(dir / "iamglass"))
      throw std::runtime_error("search index " + dir.string() + " has the single-database layout of an older format, this version reads " +
                               format_version);
    if (auto found = shard_dirs(dir); found != 0 && found != shards)
      throw std::runtime_error("search index " + dir.string() + " has " + std::to_string(found) + " shards, this service uses " +
                               std::to_string(shards));
    auto opened = std::make_unique<impl>();
    for (std::size_t k = 0; k < shards; ++k) {
      opened->shards.push_back(std::make_unique<impl::shard>(shard_path(dir, k), dir / ("documents-" + std::to_string(k))));
      auto& db = opened->shards.back()->db;
      auto format = db.get_metadata(format_key);
      if (db.get_doccount() > 0 && format != format_version)  // the write locks go with `opened`
        throw std::runtime_error("search index " + dir.string() + " has format " + (format.empty() ? "1" : format) +
                                 ", this version reads " + format_version);
      if (db.get_doccount() > 0 && opened->shards.back()->documents.size() == 0)
        throw std::runtime_error("search index " + dir.string() + " has lost the documents beside shard " + std::to_string(k));
    }
    opened->rebuilding = !opened->shards.front()->db.get_metadata(rebuild_target_key).empty();
    for (auto& shard : opened->shards) {
      auto joined = shard->db.get_metadata(common_terms_key);
      shard->paired = !joined.empty();
      if (shard->paired && !opened->common) opened->common = split_terms(joined);
    }
    impl_ = std::move(opened);
  } catch (const Xapian::Error& e) {
    throw std::runtime_error("search index " + dir.string() + ": " + e.get_description());
  }
}

search_index::~search_index() = default;

bool search_index::in_use(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return false;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_directory()) continue;
    try {
      Xapian::WritableDatabase probe(e.path().string(), Xapian::DB_OPEN);
    } catch (const Xapian::DatabaseLockError&) {
      return true;
    } catch (const Xapian::Error&) {
      // unreadable: not in use, to be rebuilt
    }
  }
  return false;
}

std::uint64_t search_index::applied() const {
  // Shards commit side by side: a crash between two commits leaves some ahead, and the index
  // resumes from the one behind (applying a change again rebuilds the same document).
  std::optional<std::uint64_t> least;
  for (const auto& s : impl_->shards) {
    std::lock_guard lock{s->mutex};
    auto v = s->db.get_metadata(applied_key);
    std::uint64_t at = v.empty() ? 0 : std::stoull(v);
    least = least ? std::min(*least, at) : at;
  }
  return least.value_or(0);
}

std::uint64_t search_index::documents() const {
  std::uint64_t n = 0;
  for (const auto& s : impl_->shards) {
    std::lock_guard lock{s->mutex};
    n += s->db.get_doccount();
  }
  return n;
}

void search_index::apply(const std::vector<indexed_resource>& upserts,
                         const std::vector<std::pair<std::string, std::string>>& removed, std::uint64_t applied_seq) {
  impl_->write(upserts, removed, applied_seq, {});
}

void search_index::begin_rebuild(std::uint64_t target) {
  impl_->write({}, {}, 0, {{rebuild_target_key, std::to_string(target)}, {rebuild_after_key, ""}});
  impl_->rebuilding = true;
}

void search_index::apply_rebuild(const std::vector<indexed_resource>& docs, const resource_position& after, bool last) {
  auto progress = rebuilding();
  if (!progress) throw std::logic_error("no rebuild of the search index is in progress");
  if (last) {
    impl_->write(docs, {}, progress->target, {{rebuild_target_key, ""}, {rebuild_after_key, ""}});
    impl_->rebuilding = false;
  } else {
    impl_->write(docs, {}, 0, {{rebuild_after_key, after.tenant + '\0' + after.id}});
  }
}

std::optional<search_index::rebuild_progress> search_index::rebuilding() const {
  auto& first = *impl_->shards.front();
  std::lock_guard lock{first.mutex};
  auto target = first.db.get_metadata(rebuild_target_key);
  if (target.empty()) return std::nullopt;
  auto after = first.db.get_metadata(rebuild_after_key);  // tenant NUL id, or empty
  auto nul = after.find('\0');
  if (nul == std::string::npos) return rebuild_progress{std::stoull(target), {}};
  return rebuild_progress{std::stoull(target), {after.substr(0, nul), after.substr(nul + 1)}};
}

bool search_index::is_rebuilding() const noexcept {
  return impl_->rebuilding.load();
}

struct search_index::snapshot {
  const Xapian::Database& db;                       ///< every shard, as one
  const std::vector<Xapian::Database>& shards;      ///< each shard alone, in order
  const std::vector<std::string>& keys;             ///< the stemmer keys the index holds
  const term_set& common;                           ///< the words whose pairs the shards hold
  const std::vector<shard_documents::reader>& documents;  ///< each shard's (words, records)
};

const char* search_index::format() noexcept { return format_version; }

search_page search_index::search(const search_query& q) const {
  // A reader whose revision the writer has since overwritten throws DatabaseModifiedError: reopen
  // and run again (Xapian's documented way).
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      auto r = impl_->checkout();  // opening or reopening may meet a discarded revision too
      auto page = run({*r.db, r.shards, r.keys, r.common, r.documents}, q);
      impl_->give_back(std::move(r));
      return page;
    } catch (const Xapian::DatabaseModifiedError&) {
      // That reader is dropped; the next attempt takes (or opens) another at the last commit.
    }
  }
  // Commits keep overtaking this search: run it on the writers' databases, which cannot change
  // while their locks are held.
  std::vector<std::unique_lock<std::mutex>> locks;
  Xapian::Database all;
  std::vector<Xapian::Database> each;
  std::vector<shard_documents::reader> documents;
  for (const auto& s : impl_->shards) {
    locks.emplace_back(s->mutex);
    all.add_database(s->db);
    each.push_back(s->db);
    documents.push_back(s->documents.read());
  }
  auto keys = index_keys_of(all);
  auto common = impl::common_of(each);
  return run({all, each, keys, common, documents}, q);
}

namespace {

/// Whether `terms` stand in this order, next to each other, in document `did` of `db`, by Xapian's
/// position lists (documents without a word sequence).
bool adjacent_by_position(const Xapian::Database& db, Xapian::docid did, const std::vector<std::string>& terms) {
  std::vector<std::vector<Xapian::termpos>> positions;
  for (const auto& t : terms) {
    std::vector<Xapian::termpos> at;
    try {
      for (auto p = db.positionlist_begin(did, t); p != db.positionlist_end(did, t); ++p) at.push_back(*p);
    } catch (const Xapian::Error&) {
      return false;  // the document does not hold this word
    }
    if (at.empty()) return false;
    positions.push_back(std::move(at));
  }
  for (auto p : positions[0]) {
    std::size_t k = 1;
    while (k < positions.size() && std::binary_search(positions[k].begin(), positions[k].end(), p + k)) ++k;
    if (k == positions.size()) return true;
  }
  return false;
}

/// Words a query needs next to each other: as Xapian terms (for a position check), hashes, and
/// the bits a document's pair sketch must have for all of them (`together`) and for each two
/// neighbours (`pairs`, the proximity bonus's).
struct word_run {
  std::vector<std::string> terms;
  std::vector<std::uint32_t> hashes;
  pair_bits together;
  std::vector<pair_bits> pairs;
  word_run() = default;
  explicit word_run(std::vector<std::string> t) : terms(std::move(t)) {
    for (const auto& term : terms) hashes.push_back(word_hash(term));
    together = pair_bits::of(hashes);
    for (std::size_t i = 0; i + 1 < hashes.size(); ++i) pairs.push_back(pair_bits::of({hashes[i], hashes[i + 1]}));
  }
};

/// What one parse of a query (one stemmer key) asks of a document's word order: `phrases` that
/// must stand in its text (lifted out of the Xapian query), `words` whose neighbours together earn
/// the proximity bonus (the query's text terms in order; empty when it has a phrase).
struct word_order {
  std::uint32_t key = 0;  ///< hash of the stemmer key (shard_documents' element 0)
  std::vector<word_run> phrases;
  word_run words;
};

/// What the documents beside a shard hold of one document, each read when first asked for: its
/// pair sketch (most checks end there) and its word sequence.
class document_words {
public:
  /// `cache`: the search's last block of sketches in this shard (none: looked up alone).
  document_words(const shard_documents::reader& documents, Xapian::docid local,
                 shard_documents::reader::sketch_cache* cache = nullptr)
      : documents_(documents), local_(local), cache_(cache) {}
  const std::optional<pair_sketch>& sketch() const {
    if (!sketch_read_) sketch_ = documents_.sketch(local_, cache_), sketch_read_ = true;
    return sketch_;
  }
  const std::optional<word_sequence>& sequence() const {
    if (!sequence_read_) sequence_ = documents_.find(local_), sequence_read_ = true;
    return sequence_;
  }
  /// The hash of the document's stemmer key, if stored.
  std::optional<std::uint32_t> key() const {
    if (sketch()) return sketch()->key;
    if (sequence()) return sequence()->key();
    return std::nullopt;
  }
  /// Whether `bits` rule the pairs they stand for out (false when there is no sketch to tell).
  bool ruled_out(const pair_bits& bits) const { return sketch() && !sketch()->may_hold(bits); }

private:
  const shard_documents::reader& documents_;
  Xapian::docid local_;
  shard_documents::reader::sketch_cache* cache_;
  mutable std::optional<pair_sketch> sketch_;
  mutable std::optional<word_sequence> sequence_;
  mutable bool sketch_read_ = false, sequence_read_ = false;
};

/// The parses a document may have gone through: the one of its stemmer key, or every one when the
/// key (not stored, or one no parse has) does not tell.
std::vector<const word_order*> orders_of(const std::vector<word_order>& orders, std::optional<std::uint32_t> key) {
  std::vector<const word_order*> out;
  for (const auto& o : orders)
    if (key && o.key == *key) return {&o};
  for (const auto& o : orders) out.push_back(&o);
  return out;
}

/// Whether document `did` (numbered across shards) holds every phrase of `o`: its sketch turns
/// most away; else its words, or Xapian's positions for a document without them.
bool phrases_hold(const Xapian::Database& db, Xapian::docid did, const document_words& doc, const word_order& o) {
  for (const auto& ph : o.phrases)
    if (doc.ruled_out(ph.together)) return false;
  for (const auto& ph : o.phrases) {
    const auto& seq = doc.sequence();
    if (seq ? !seq->holds(ph.hashes) : !adjacent_by_position(db, did, ph.terms)) return false;
  }
  return true;
}

/// Which shard, and which of its documents, Xapian is matching: a filter that every candidate
/// passes, told its shard in `init` (by UUID, as `document_list`'s copies are), that notes each
/// candidate it is asked about. Xapian 1.4 matches the shards of a search one after the other and
/// gives a match decider a document's id within its shard, not the shard: the decider reads the
/// shard here. Its estimate (every document, none for sure) keeps it last in an AND and in place.
class shard_marker final : public Xapian::PostingSource {
public:
  struct state {
    std::vector<std::string> uuids;  ///< the shards', in order
    std::size_t shard = 0;           ///< of the candidate last noted
    Xapian::docid local = 0;         ///< the candidate last noted, numbered within its shard
  };
  explicit shard_marker(std::shared_ptr<state> st) : st_(std::move(st)) {}

  void init(const Xapian::Database& db) override {
    auto uuid = db.get_uuid();
    for (std::size_t k = 0; k < st_->uuids.size(); ++k)
      if (st_->uuids[k] == uuid) shard_ = k;
    last_ = db.get_lastdocid();
    documents_ = db.get_doccount();
    current_ = 0;
  }
  Xapian::doccount get_termfreq_min() const override { return 0; }
  Xapian::doccount get_termfreq_est() const override { return documents_; }
  Xapian::doccount get_termfreq_max() const override { return documents_; }
  Xapian::docid get_docid() const override { return current_; }
  bool at_end() const override { return current_ > last_; }
  bool check(Xapian::docid did, double) override {
    note(did);
    return true;
  }
  void next(double) override { note(current_ + 1); }
  void skip_to(Xapian::docid did, double) override {
    if (did > current_) note(did);
  }
  Xapian::PostingSource* clone() const override { return new shard_marker(st_); }

private:
  void note(Xapian::docid did) {
    current_ = did;
    st_->shard = shard_;
    st_->local = did;
  }
  std::shared_ptr<state> st_;
  std::size_t shard_ = 0;
  Xapian::docid last_ = 0, current_ = 0;
  Xapian::doccount documents_ = 0;
};

/// Keeps the candidates whose text holds the query's phrases, read from the word sequences (a
/// lookup in the map each, where Xapian's phrase check read two position lists of two blocks).
/// Xapian asks a decider only about candidates whose weight would place them in the answer, as it
/// checks its own phrases: the check costs the best candidates, not all of them.
class phrase_check final : public Xapian::MatchDecider {
public:
  phrase_check(const Xapian::Database& db, const std::vector<shard_documents::reader>& documents,
               const std::vector<word_order>& orders, std::shared_ptr<const shard_marker::state> marker)
      : db_(db), documents_(documents), orders_(orders), marker_(std::move(marker)), caches_(documents.size()) {}
  bool operator()(const Xapian::Document& candidate) const override {
    auto local = candidate.get_docid();
    if (marker_->local != local)  // Xapian no longer matches as 1.4 does: not to be guessed
      throw std::logic_error("search index: a candidate's shard is unknown to the phrase check");
    auto k = marker_->shard;
    auto did = merge_docid(local, k, documents_.size());
    document_words words{documents_[k], local, &caches_[k]};
    for (const auto* o : orders_of(orders_, words.key()))
      if (phrases_hold(db_, did, words, *o)) return true;
    return false;
  }

private:
  const Xapian::Database& db_;
  const std::vector<shard_documents::reader>& documents_;
  const std::vector<word_order>& orders_;
  std::shared_ptr<const shard_marker::state> marker_;
  mutable std::vector<shard_documents::reader::sketch_cache> caches_;  ///< a shard's candidates come in order
};

/// Of `words` (a query's terms in order), the share of neighbouring pairs that stand next to each
/// other, in that order, in document `did`: from its word sequence, else by position.
double adjacent_share(const Xapian::Database& db, Xapian::docid did, const document_words& doc, const word_run& words) {
  auto n = words.terms.size();
  if (n < 2) return 0;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (doc.ruled_out(words.pairs[i])) continue;
    const auto& seq = doc.sequence();
    bool together = seq ? seq->holds({words.hashes[i], words.hashes[i + 1]})
                        : adjacent_by_position(db, did, {words.terms[i], words.terms[i + 1]});
    if (together) ++pairs;
  }
  return static_cast<double>(pairs) / static_cast<double>(n - 1);
}

/// Whether `q` is an exact phrase of plain terms (`"a b c"`, `a ADJ/2 b`... with the window its
/// words fill; not a wider window or `NEAR`), and its terms.
std::optional<std::vector<std::string>> exact_phrase(const Xapian::Query& q) {
  auto n = q.get_num_subqueries();
  if (q.get_type() != Xapian::Query::OP_PHRASE || n < 2) return std::nullopt;
  // Xapian 1.4 has no accessor for a phrase's window; its description spells it.
  if (q.get_description().find(" PHRASE " + std::to_string(n) + " ") == std::string::npos) return std::nullopt;
  std::vector<std::string> terms;
  for (std::size_t i = 0; i < n; ++i) {
    auto sub = q.get_subquery(i);
    if (sub.get_type() != Xapian::Query::LEAF_TERM) return std::nullopt;
    terms.push_back(*sub.get_terms_begin());
  }
  return terms;
}

/// A lifted phrase's AND leaves out its words in at least this share of the documents (when some
/// of its words are not): the check finds them, and BM25 gives such a word ~1% of a rare one's
/// weight (Xapian's floor for words in more than half the documents, log(1 + (N - n + 0.5) /
/// (2n + 1)), is 0.05 at 90%, where a word in 1% weighs log 99 = 4.6). Xapian then reads only the
/// rarer words' lists, where moving through a word in most documents to each candidate read all
/// of its list (a third of what a phrase with such a word read, at 100,000 documents).
constexpr double dense_share = 0.9;

/// `q` with every exact phrase a match must satisfy (at its top, or under AND, FILTER, or the
/// left of AND_NOT and AND_MAYBE) as the AND of its words (less those `dense` says are in
/// `dense_share` of the documents), the phrase kept in `phrases` for `phrase_check`: the same
/// documents, each checked once it could rank. Phrases Xapian must weigh against other branches
/// (under OR, XOR, NOT) stay as they are.
Xapian::Query lift_phrases(const Xapian::Query& q, std::vector<word_run>& phrases,
                           const std::function<bool(const std::string&)>& dense) {
  using Q = Xapian::Query;
  if (auto terms = exact_phrase(q)) {
    std::vector<Q> words;
    for (const auto& t : *terms)
      if (!dense(t)) words.emplace_back(t);
    if (words.empty())
      for (const auto& t : *terms) words.emplace_back(t);
    phrases.emplace_back(std::move(*terms));
    return Q(Q::OP_AND, words.begin(), words.end());
  }
  auto n = q.get_num_subqueries();
  switch (q.get_type()) {
    case Q::OP_AND:
    case Q::OP_FILTER:
    case Q::OP_AND_NOT:
    case Q::OP_AND_MAYBE: {
      bool all = q.get_type() == Q::OP_AND || q.get_type() == Q::OP_FILTER;
      std::vector<Q> subs;
      for (std::size_t i = 0; i < n; ++i) subs.push_back(all || i == 0 ? lift_phrases(q.get_subquery(i), phrases, dense) : q.get_subquery(i));
      return Q(q.get_type(), subs.begin(), subs.end());
    }
    default:
      return q;
  }
}

/// Proximity: among the best candidates by BM25 (a window of about two pages), a hit whose query
/// words stand together gains up to this share of its score (all neighbouring pairs adjacent).
/// BM25 alone ranks `spring tide` the same whether the words are together or apart; Xapian's way
/// of rewarding it (a phrase the query may match) checks positions for every candidate, which
/// costs as much as a phrase search of common words; a window costs a page.
constexpr double proximity_boost = 0.5;

constexpr unsigned parse_flags = Xapian::QueryParser::FLAG_PHRASE | Xapian::QueryParser::FLAG_BOOLEAN |
                                 Xapian::QueryParser::FLAG_LOVEHATE | Xapian::QueryParser::FLAG_BOOLEAN_ANY_CASE;

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
      parses.push_back(parser.parse_query(text, parse_flags));
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

}  // namespace

namespace {

/// The filters of `q`, one group of terms each (a document passes when it holds a term of every
/// group): the tenant, the types, languages and Work asked for, and layer 2 (the caller's grants).
std::shared_ptr<filter_source::groups> filter_groups(const search_query& q) {
  auto groups = std::make_shared<filter_source::groups>();
  groups->push_back({"XT" + q.tenant});
  if (!q.types.empty()) groups->push_back(prefixed("XY", q.types));
  if (!q.languages.empty()) groups->push_back(prefixed("XL", q.languages));
  if (!q.work_id.empty()) groups->push_back({"XW" + q.work_id});
  groups->push_back(prefixed("XR", q.principals));  // layer 2: only what the caller may read
  return groups;
}

}  // namespace

Xapian::Query search_index::skipped(const snapshot& at, const search_query& q, bool exact) const {
  const auto& shards = at.shards;
  auto n = shards.size();
  auto by_shard = std::make_shared<document_list::lists>();
  for (const auto& shard : shards) by_shard->emplace_back(shard.get_uuid(), std::vector<Xapian::docid>{});
  std::vector<const std::string*> unknown;
  {
    std::lock_guard lock{impl_->known_mutex};
    for (const auto& id : *q.skip) {
      auto known = exact ? impl_->known.end() : impl_->known.find(unique_term(q.tenant, id));
      if (known == impl_->known.end()) {
        unknown.push_back(&id);
        continue;
      }
      auto [k, local] = split_docid(known->second, n);
      (*by_shard)[k].second.push_back(local);
    }
  }
  impl::learnt looked_up;
  for (const auto* id : unknown) {
    auto k = shard_of(q.tenant, *id, n);
    auto term = unique_term(q.tenant, *id);
    auto found = shards[k].postlist_begin(term);
    if (found == shards[k].postlist_end(term)) continue;
    (*by_shard)[k].second.push_back(*found);
    looked_up.emplace_back(std::move(term), merge_docid(*found, k, n));
  }
  impl_->learn(looked_up);
  for (auto& [uuid, ids] : *by_shard) std::sort(ids.begin(), ids.end());
  document_list listed{std::move(by_shard)};
  return Xapian::Query(listed.clone()->release());
}

static_assert(std::is_same_v<Xapian::docid, unsigned>, "search_index.hpp declares hit_of with Xapian's docid type");

std::optional<search_hit> search_index::hit_of(const snapshot& at, Xapian::docid id, double score) const {
  auto place = split_docid(id, at.shards.size());
  auto record = at.documents[place.shard].record(place.local);
  if (!record) return std::nullopt;
  auto f = decode(*record);
  return search_hit{std::string{f[0]}, std::string{f[1]}, std::string{f[2]}, std::string{f[3]}, std::string{f[4]}, score, {}};
}

search_page search_index::run_metadata(const snapshot& at, const search_query& q) const {
  // Titles are short and few documents hold a query's title terms: Xapian's own phrase check (on
  // the title terms' positions) and no tiers, pairs or proximity. The weights are the whole
  // index's (`at.db`), so equal titles weigh the same in any shard.
  auto keys = stem_keys(at.keys, q.languages);
  auto groups = filter_groups(q);
  Xapian::Query ranked(Xapian::Query::OP_FILTER, parse(at.db, q.text, keys, true),
                       filters_of(impl_->filters, groups, reach_of(at.db, *groups)));
  Xapian::Enquire enquire{at.db};
  enquire.set_weighting_scheme(ranking());
  search_page page;
  for (int attempt = 0; attempt < 3; ++attempt) {  // as in run: a stale known id runs it again
    bool skipping = q.skip && !q.skip->empty();
    page = search_page{};
    enquire.set_query(skipping ? Xapian::Query(Xapian::Query::OP_AND_NOT, ranked, skipped(at, q, attempt == 2)) : ranked);
    auto mset = enquire.get_mset(0, static_cast<Xapian::doccount>(q.page_size + 1));
    page.total_estimate = mset.get_matches_estimated();
    bool stale = false;
    impl::learnt answered;
    for (auto it = mset.begin(); it != mset.end() && page.hits.size() < q.page_size; ++it) {
      auto h = hit_of(at, *it, it.get_weight());
      if (!h) continue;
      answered.emplace_back(unique_term(q.tenant, h->id), *it);
      if (skipping && q.skip->count(h->id)) stale = true;
      page.hits.push_back(std::move(*h));
    }
    page.exhausted = mset.size() <= q.page_size;
    impl_->learn(answered);
    if (!stale) break;
  }
  return page;
}

search_page search_index::run(const snapshot& at, const search_query& q) const {
  if (q.metadata_only) return run_metadata(at, q);
  const auto& db = at.db;
  const auto& shards = at.shards;
  auto keys = stem_keys(at.keys, q.languages);
  auto parses = parse_each(db, q.text, keys, false);
  auto marks = terms_of(combine(parses, keys));
  // Per parse: its phrases, checked against the word sequences (phrases of two common words are
  // their pair terms instead), and the words of the proximity bonus, for queries of several words
  // without a phrase (a phrase already keeps its words together).
  std::vector<word_order> orders(keys.size());
  auto documents_held = static_cast<double>(db.get_doccount());
  auto dense = [&](const std::string& term) { return db.get_termfreq(term) >= dense_share * documents_held; };
  std::size_t longest = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    orders[i].key = word_hash(keys[i]);
    if (q.text.find('"') == std::string::npos) {
      std::vector<std::string> words;
      for (auto t = parses[i].get_terms_begin(); t != parses[i].get_terms_end(); ++t)
        if (text_term(*t)) words.push_back(*t);
      orders[i].words = word_run{std::move(words)};
    }
    longest = std::max(longest, orders[i].words.terms.size());
    parses[i] = lift_phrases(with_pairs(parses[i], at.common), orders[i].phrases, dense);
  }
  // Phrases are checked against the word sequences by a match decider, which needs the shard of
  // each candidate: one marker over the whole text query tells it (one per parse would be asked
  // about each parse's own next document, not the candidate's).
  auto text = combine(parses, keys);
  auto marked = std::make_shared<shard_marker::state>();
  for (const auto& shard : shards) marked->uuids.push_back(shard.get_uuid());
  bool phrased = std::any_of(orders.begin(), orders.end(), [](const word_order& o) { return !o.phrases.empty(); });
  if (phrased) {
    shard_marker marker{marked};
    text = Xapian::Query(Xapian::Query::OP_FILTER, text, Xapian::Query(marker.clone()->release()));
  }
  phrase_check check{db, at.documents, orders, marked};
  auto groups = filter_groups(q);
  auto reach = reach_of(db, *groups);
  Xapian::Query ranked(Xapian::Query::OP_FILTER, text, filters_of(impl_->filters, groups, reach));
  // One common word or pair, with nothing to check or reorder: ranked by its impact tiers first,
  // from the highest level expected to fill the window (twice over) through the filters and
  // the hits passed over. Sparse filters drive the query by their own short lists instead.
  int top_level = 0;
  std::string tiered;
  if (!phrased && longest <= 1 && reach.dense && text.get_type() == Xapian::Query::LEAF_TERM) {
    std::string term = *text.get_terms_begin();
    if (term.rfind("XP", 0) == 0 || at.common.count(term)) tiered = std::move(term);
  }
  auto window = longest > 1 ? 2 * q.page_size + 1 : q.page_size + 1;
  if (!tiered.empty()) {
    double wanted = 2.0 * static_cast<double>(window + (q.skip ? q.skip->size() : 0));
    for (int level = max_tier; level >= 1 && top_level == 0; --level)
      if (db.get_termfreq(tier_term(level, tiered)) * reach.share >= wanted) top_level = level;
  }
  Xapian::Enquire enquire{db};
  auto n = shards.size();
  enquire.set_weighting_scheme(ranking());
  // Several words: rank a window of two pages by BM25, then reorder it with the proximity bonus.
  search_page page;
  Xapian::MSet mset;
  struct candidate {
    Xapian::MSetIterator it;
    double score;
  };
  std::vector<candidate> order;
  // A known document id is stale when its Resource was removed and indexed again (another id): a
  // hit the query should have passed over then comes back. Its id is learnt and the query runs
  // again (the last attempt looks every id up).
  for (int attempt = 0; attempt < 3; ++attempt) {
    bool skipping = q.skip && !q.skip->empty();
    page = search_page{};
    order.clear();
    auto passed_over = skipping ? skipped(at, q, attempt == 2) : Xapian::Query{};
    auto without_skipped = [&](const Xapian::Query& query) {
      return skipping ? Xapian::Query(Xapian::Query::OP_AND_NOT, query, passed_over) : query;
    };
    bool filled = false;  // by a level of the impact tiers: the same window as the whole list's
    for (int level = top_level; level >= 1 && !filled; --level) {
      enquire.set_query(without_skipped(Xapian::Query(Xapian::Query::OP_FILTER, ranked, Xapian::Query(tier_term(level, tiered)))));
      mset = enquire.get_mset(0, static_cast<Xapian::doccount>(window));
      filled = mset.size() == window;
      if (filled) page.tier_level = level;
    }
    enquire.set_query(without_skipped(ranked));
    if (filled) {
      page.total_estimate = enquire.get_mset(0, 0).get_matches_estimated();  // from statistics, no postings read
    } else {
      mset = enquire.get_mset(0, static_cast<Xapian::doccount>(window), 0, nullptr, phrased ? &check : nullptr);
      page.total_estimate = mset.get_matches_estimated();
    }
    for (auto it = mset.begin(); it != mset.end(); ++it) {
      double score = it.get_weight();
      if (longest > 1) {
        auto place = split_docid(*it, n);
        document_words doc{at.documents[place.shard], place.local};
        double best = 0;
        for (const auto* o : orders_of(orders, doc.key())) best = std::max(best, adjacent_share(db, *it, doc, o->words));
        score *= 1 + proximity_boost * best;
      }
      order.push_back({it, score});
    }
    std::stable_sort(order.begin(), order.end(), [](const candidate& a, const candidate& b) { return a.score > b.score; });
    bool stale = false;
    impl::learnt answered;  // answered hits are known by document id on the session's next page
    for (std::size_t i = 0; i < order.size() && page.hits.size() < q.page_size; ++i) {
      auto at_shard = split_docid(*order[i].it, n);
      auto record = at.documents[at_shard.shard].record(at_shard.local);
      if (!record) continue;  // removed by a batch whose Xapian commit this search does not see yet
      auto f = decode(*record);
      search_hit h{std::string{f[0]}, std::string{f[1]}, std::string{f[2]}, std::string{f[3]}, std::string{f[4]}, order[i].score, {}};
      answered.emplace_back(unique_term(q.tenant, h.id), *order[i].it);
      if (skipping && q.skip->count(h.id)) stale = true;
      h.snippet = snippet_of(f[5], marks, stemmer_for(h.language), 200);
      page.hits.push_back(std::move(h));
    }
    page.exhausted = mset.size() <= q.page_size;
    impl_->learn(answered);
    if (!stale) break;
  }
  return page;
}

}  // namespace cl::storage
