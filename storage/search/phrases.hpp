#pragma once
/// Phrases and proximity in the search index (storage-private): exact phrases lifted out of the
/// Xapian query and checked against the word sequences kept beside each shard
/// (storage/search/shard_documents.hpp), and the proximity bonus of a window of the best candidates.

#include "storage/search/shards.hpp"
#include "storage/search/shard_documents.hpp"

#include <xapian.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cl::storage::search_detail {

/// Whether `terms` stand in this order, next to each other, in document `did` of `db`, by Xapian's
/// position lists (documents without a word sequence).
bool adjacent_by_position(const Xapian::Database& db, Xapian::docid did, const std::vector<std::string>& terms);

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
std::vector<const word_order*> orders_of(const std::vector<word_order>& orders, std::optional<std::uint32_t> key);

/// Whether document `did` (numbered across shards) holds every phrase of `o`: its sketch turns
/// most away; else its words, or Xapian's positions for a document without them.
bool phrases_hold(const Xapian::Database& db, Xapian::docid did, const document_words& doc, const word_order& o);

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
double adjacent_share(const Xapian::Database& db, Xapian::docid did, const document_words& doc, const word_run& words);

/// A lifted phrase's AND leaves out its words in at least this share of the documents (when some
/// of its words are not): the check finds them, and BM25 gives such a word ~1% of a rare one's
/// weight (Xapian's floor for words in more than half the documents, log(1 + (N - n + 0.5) /
/// (2n + 1)), is 0.05 at 90%, where a word in 1% weighs log 99 = 4.6). Xapian then reads only the
/// rarer words' lists.
inline constexpr double dense_share = 0.9;

/// `q` with every exact phrase a match must satisfy (at its top, or under AND, FILTER, or the
/// left of AND_NOT and AND_MAYBE) as the AND of its words (less those `dense` says are in
/// `dense_share` of the documents) filtered by the buckets of its neighbouring words
/// (storage/search/terms.hpp), the phrase kept in `phrases` for `phrase_check`: the same
/// documents, each checked once it could rank. Phrases Xapian must weigh against other branches
/// (under OR, XOR, NOT) stay as they are.
Xapian::Query lift_phrases(const Xapian::Query& q, std::vector<word_run>& phrases,
                           const std::function<bool(const std::string&)>& dense);

/// Proximity: among the best candidates by BM25 (a window of about two pages), a hit whose query
/// words stand together gains up to this share of its score (all neighbouring pairs adjacent).
/// BM25 alone ranks `spring tide` the same whether the words are together or apart; Xapian's way
/// of rewarding it (a phrase the query may match) checks positions for every candidate, which
/// costs as much as a phrase search of common words; a window costs a page.
inline constexpr double proximity_boost = 0.5;

}  // namespace cl::storage::search_detail
