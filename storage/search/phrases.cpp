#include "storage/search/phrases.hpp"
#include "storage/search/terms.hpp"

#include <algorithm>

namespace cl::storage::search_detail {

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
static std::optional<std::vector<std::string>> exact_phrase(const Xapian::Query& q) {
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

/// `q` with every exact phrase a match must satisfy (at its top, or under AND, FILTER, or the
/// left of AND_NOT and AND_MAYBE) as the AND of its words (less those `dense` says are in
/// `dense_share` of the documents) filtered by the buckets of its neighbouring words
/// (storage/search/terms.hpp), the phrase kept in `phrases` for `phrase_check`: the same
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
    const auto& run = phrases.emplace_back(std::move(*terms));
    std::vector<Q> buckets;
    for (std::size_t i = 0; i + 1 < run.hashes.size(); ++i)
      buckets.emplace_back(pair_bucket_term(run.hashes[i], run.hashes[i + 1]));
    return Q(Q::OP_FILTER, Q(Q::OP_AND, words.begin(), words.end()), Q(Q::OP_AND, buckets.begin(), buckets.end()));
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


}  // namespace cl::storage::search_detail
