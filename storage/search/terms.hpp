#pragma once
/// The search index's terms and ranking (storage-private; storage/search/index.hpp is the API):
/// how a Resource's words become Xapian terms (stems per language, BM25 weights folded into the
/// wdf, pairs of common words, impact tiers) and how a query's text is parsed into the same terms.
///
/// What forces a format bump (`format_version` in storage/search/index.cpp; an index of another
/// format is rebuilt at start): anything a stored document was built with and a query relies on.
/// That is every constant and term prefix in this header (BM25 parameters, `wdf_scale`,
/// `reference_words`, the pair and tier schemes and `max_tier`, the stemmer keys), the filter
/// table (storage/search/filters.hpp), the shard hash and the record layout
/// (storage/search/shards.hpp), and the word sequences and sketches beside each shard
/// (storage/search/shard_documents.hpp). The common-word choice (`common_share`, `max_common_terms`,
/// `pairs_from_documents`) is made once per index and kept in its metadata: changing it applies to
/// the next rebuild, no bump needed.

#include <xapian.h>

// The shard-order assumption (storage/search/phrases.hpp: shard_marker) and the phrase window read
// from a query's description hold for Xapian 1.4; another major or minor version must be checked.
static_assert(XAPIAN_MAJOR_VERSION == 1 && XAPIAN_MINOR_VERSION == 4,
              "the search index relies on Xapian 1.4's matching order; check storage/search/phrases.hpp");

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace cl::storage::search_detail {

using term_set = std::unordered_set<std::string>;

/// The unique term of a Resource: `Q<tenant>\0<id>`.
std::string unique_term(const std::string& tenant, const std::string& id);

/// Xapian's stemmer for a language code; none (no stemming) for an unknown or absent language.
Xapian::Stem stemmer_for(const std::string& language);

/// Which stemmer a document's words went through: its language's (`en` for `en-GB`), or `none`.
/// Documents carry it as the boolean term `XK<key>`; a query is parsed once per key, each parse
/// matched only against documents stemmed the same way.
std::string stem_key(const std::string& language);

// -- Ranking: BM25 with its length normalisation applied when a document is indexed, not when a
// query runs (Xapian's BM25 reads every candidate's length from a chunked list: most of a one-word
// query's time at 100,000 documents). Each occurrence counts `wdf_scale / norm` (norm = 1 - b + b *
// max(words / reference_words, 0.5), BM25's own form with b = 0.5, Xapian's default), and queries
// run BM25 with b = 0 (no length read) and k1 scaled alike: the same ranking as BM25 with a fixed
// average length of `reference_words`, up to one factor common to every weight.
inline constexpr double bm25_b = 0.5;
inline constexpr double bm25_k1 = 1.0;
inline constexpr double reference_words = 500;
inline constexpr double wdf_scale = 256;

/// The wdf of one occurrence in a document of `words` words.
Xapian::termcount wdf_per_occurrence(std::size_t words);

/// The query-time weighting scheme that goes with `wdf_per_occurrence`.
Xapian::BM25Weight ranking();

/// Whether byte `c` belongs to a word (letters, digits, any byte of a multi-byte UTF-8 character).
/// Inline: snippets ask it of every byte they scan.
inline bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/// Words in `text` as a plain scan counts them (runs of word bytes).
std::size_t count_words(const std::string& text);

// -- Pairs of common words, for phrases of such words: the pair's own posting list costs what a
// one-word query does, where checking positions cost most documents. Only pairs of two common
// words are indexed (a phrase with a rarer word is driven by that word's short list). The common
// words are chosen once, from the index's own statistics when it first holds
// `pairs_from_documents` documents (text terms in at least `common_share` of them, at most
// `max_common_terms`), kept in every shard's metadata `common_terms`; the documents already held
// get their pairs in the same commit, and every later document as it is indexed. A word that
// becomes common later is not added (its phrases are checked against the word sequences); a
// rebuild chooses again. The share trades indexing speed for phrase latency (a lower share pairs
// more words: slower indexing, faster phrases); 10% was measured best (docs/benchmarks.md).
inline constexpr const char* common_terms_key = "common_terms";
inline constexpr Xapian::doccount pairs_from_documents = 1000;
inline constexpr double common_share = 0.10;
inline constexpr std::size_t max_common_terms = 256;

/// The term of two words (text terms) standing next to each other, in that order: `XP<a> <b>`.
std::string pair_term(const std::string& first, const std::string& second);

/// A term of the text: a `Z` stem or a word as written (prefixed terms are titles only or filters).
bool text_term(const std::string& term);

/// The common words as metadata: their number, then each on a line of its own ("0" when none
/// qualified: chosen all the same, so that the choice is not made again every batch).
std::string join_terms(const term_set& terms);
term_set split_terms(const std::string& joined);

/// The common words of `shards` (as they stand before commit): text terms in at least
/// `common_share` of their `documents`, the most frequent first, at most `max_common_terms`.
term_set choose_common(const std::vector<const Xapian::Database*>& shards, Xapian::doccount documents);

/// Gives every document of `db` its pairs of `common` words (once, when they are chosen).
void pair_existing(Xapian::WritableDatabase& db, const term_set& common);

/// Adds to `doc` a pair term for every two neighbouring positions holding words of `common`,
/// weighted per occurrence as the document's words are (their wdf over their positions), and the
/// impact tiers of those words and pairs.
void add_pairs(Xapian::Document& doc, const term_set& common);

/// `q` with every exact phrase of two common words (`"a b"`, also `a ADJ/1 b` and `a-b`) as their
/// pair term: the same documents, ranked by the pair's own BM25 weight. Other phrases and
/// operators it cannot rebuild as they were are left as they are.
Xapian::Query with_pairs(const Xapian::Query& q, const term_set& common);

// -- Pair buckets, for phrases with a rarer word: every two neighbouring words of a document (its
// word sequence, storage/search/shard_documents.hpp) set the boolean term `XB<bucket>`, the pair's
// two word hashes mixed into one of 2^`pair_bucket_bits` buckets. A phrase's AND of its words is
// filtered by the buckets of its neighbouring words: a document holding the phrase holds them, and
// one of ~300 words holds a given bucket ~1 time in 200, so the phrase check reads about its hits
// and that share of the documents holding its words, where it read all of those (a word in 5% of
// the documents made 5,000 checks at 100,000). Fewer buckets would let more through; more would
// make a commit rewrite more lists (a batch of 2,000 documents touches every bucket).
inline constexpr int pair_bucket_bits = 16;

/// The bucket term of words `first` and `second` (word hashes) standing next to each other.
std::string pair_bucket_term(std::uint32_t first, std::uint32_t second);

/// Adds to `doc` the bucket term of every two neighbouring words of `sequence` (as `sequence_of`).
void add_pair_buckets(Xapian::Document& doc, const std::vector<std::uint32_t>& sequence);

// -- Impact tiers, for a query that is one common word or one pair: ranked by BM25 alone, whose
// weight grows with the wdf only (b = 0), so its best documents are those with the largest wdf.
// Such a list holds most documents and Xapian reads all of it to find a page. Each common word and
// pair of a document is also indexed as boolean terms `XI<level><term>` for every level L whose
// floor, `wdf_scale << L`, its wdf reaches. A search first ranks the term's documents of one level:
// when that fills its window, nothing outside the level can outrank them and the answer is exactly
// the whole list's. Else it goes a level down, and to the whole list last.
inline constexpr int max_tier = 9;

std::string tier_term(int level, const std::string& term);

/// `doc`'s positioned terms in position order, as word hashes; a 0 wherever positions skip (between
/// title and text). What storage/search/shard_documents.hpp keeps.
std::vector<std::uint32_t> sequence_of(const Xapian::Document& doc);

// -- Parsing a query's text.

/// `text` parsed for `db` once per stemmer its documents went through (`keys`), in that order:
/// words are stemmed as the documents' were, or taken as written where no stemmer applies.
/// `title_only`: unprefixed words match titles only (the metadata a refused caller may match on).
/// Throws query_syntax_error.
std::vector<Xapian::Query> parse_each(const Xapian::Database& db, const std::string& text,
                                      const std::vector<std::string>& keys, bool title_only);

/// The parses of `parse_each` as one query, each limited to the documents stemmed its way.
Xapian::Query combine(const std::vector<Xapian::Query>& parses, const std::vector<std::string>& keys);

/// `combine(parse_each(...))`.
Xapian::Query parse(const Xapian::Database& db, const std::string& text, const std::vector<std::string>& keys,
                    bool title_only);

/// The stemmer keys a search needs: those of the languages it filters on, else every key the
/// index holds.
std::vector<std::string> stem_keys(const std::vector<std::string>& index_keys, const std::vector<std::string>& languages);

}  // namespace cl::storage::search_detail
