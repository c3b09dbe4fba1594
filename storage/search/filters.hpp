#pragma once
/// The search index's filters (storage-private): which boolean terms a document carries for each
/// filter and how a search asks for them, described once (`filter_table`), and how a search's
/// filters run (bit sets for dense ones, Xapian's boolean terms for sparse ones), with the posting
/// source of the documents a search passes over.

#include "storage/search/types.hpp"

#include <xapian.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cl::storage::search_detail {

/// A filter: the prefix of its boolean terms, the values a Resource is indexed with, and the
/// values a search asks for (null: never asked). A document passes a search when, for every filter
/// asked, it holds one of the asked values; `always` filters are asked even with no values (layer 2:
/// no principal, no document).
struct filter_kind {
  const char* prefix;
  std::vector<std::string> (*indexed)(const indexed_resource& r);
  std::vector<std::string> (*asked)(const search_query& q);
  bool always;
};

/// Every filter: tenant `XT`, type `XY`, language `XL`, Work `XW`, staged `XS` (`1`/`0`, indexed
/// only), readers `XR` (the principals holding a grant: layer 2 is part of the query).
const std::vector<filter_kind>& filter_table();

/// Adds `r`'s filter terms to `doc`.
void add_filter_terms(Xapian::Document& doc, const indexed_resource& r);

/// Listed documents as a posting list: under `AND_NOT`, those a search passes over (a session's
/// answered hits, hits this answer refused). Each shard's own document ids, sorted. Xapian gives a
/// search of several shards a copy per shard (`clone`), each told its shard in `init`; the copy
/// finds its list by the shard's UUID. With the ids remembered from earlier answers
/// (`search_index::impl::known`), a deep page costs about the first page's price, where an `OR` of
/// the ids' unique terms cost a posting list per term and shard.
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

/// The documents of each shard up to a local document id, as a weightless posting list: under
/// `OP_FILTER`, a search ranks only the oldest documents of every shard (the combined ids up to
/// `limit * shards`). What `search_index::run` tries first for a page whose window may be all at
/// the query's highest possible weight: ties go to the lower document id, so no document after
/// the prefix could take such a window's place.
class docid_prefix final : public Xapian::PostingSource {
public:
  explicit docid_prefix(Xapian::docid limit) : limit_(limit) {}
  void init(const Xapian::Database& db) override {
    last_ = std::min(limit_, db.get_lastdocid());
    current_ = 0;
  }
  Xapian::doccount get_termfreq_min() const override { return 0; }
  Xapian::doccount get_termfreq_est() const override { return last_; }
  Xapian::doccount get_termfreq_max() const override { return last_; }
  Xapian::docid get_docid() const override { return current_; }
  bool at_end() const override { return current_ > last_; }
  void next(double) override { ++current_; }
  void skip_to(Xapian::docid did, double) override { current_ = std::max(current_, did); }
  Xapian::PostingSource* clone() const override { return new docid_prefix(limit_); }

private:
  Xapian::docid limit_, last_ = 0, current_ = 0;
};

/// The documents of one shard revision that hold a boolean term, one bit each (bit `did`), kept
/// for the searches after the first that asks: a search's dense filters are read from these
/// instead of their posting lists (Xapian moves through a filter's list to every candidate,
/// decoding it from the start of its chunk, so a filter most documents pass was read whole by
/// every search). A set is built from its term's list and tested in a step.
/// One set per shard and term, of the newest revision asked for: a commit's new revision replaces
/// the older set (a search still on an older revision builds its own and keeps it to itself), so
/// what is held follows the terms searched and the documents, not how often the index commits.
/// Bounded by `max_bytes` (1 bit a document a term; emptied when full).
class filter_sets {
public:
  using bits = std::vector<std::uint64_t>;
  static constexpr std::size_t max_bytes = std::size_t{64} << 20;

  /// The set of `term` in `db` (one shard) at its revision.
  std::shared_ptr<const bits> of(const Xapian::Database& db, const std::string& term) {
    auto key = db.get_uuid() + '\n' + term;
    auto revision = db.get_revision();
    {
      std::lock_guard lock{mutex_};
      if (auto found = sets_.find(key); found != sets_.end() && found->second.revision == revision)
        return found->second.set;
    }
    auto set = std::make_shared<bits>(db.get_lastdocid() / 64 + 1, 0);
    for (auto p = db.postlist_begin(term); p != db.postlist_end(term); ++p) (*set)[*p / 64] |= std::uint64_t{1} << (*p % 64);
    auto size = set->size() * sizeof(std::uint64_t);
    std::lock_guard lock{mutex_};
    auto found = sets_.find(key);
    if (found != sets_.end()) {
      if (found->second.revision >= revision) return set;  // as new or newer: an older reader's, not kept
      bytes_ -= found->second.bytes;
      sets_.erase(found);
    }
    if (bytes_ + size > max_bytes) {
      sets_.clear();
      bytes_ = 0;
    }
    sets_.emplace(std::move(key), held{revision, size, set});
    bytes_ += size;
    return set;
  }

  /// Bytes of the sets held.
  std::size_t bytes() const {
    std::lock_guard lock{mutex_};
    return bytes_;
  }

private:
  struct held {
    Xapian::rev revision;
    std::size_t bytes;
    std::shared_ptr<const bits> set;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, held> sets_;  ///< by shard (uuid) and term
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

/// The filters of `q`, one group of terms each (a document passes when it holds a term of every
/// group), from `filter_table`.
std::shared_ptr<filter_source::groups> filter_groups(const search_query& q);

/// How much of the index a search's filters let through: the product of each group's share (as
/// if they were independent), and whether every group holds at least a 64th of the documents.
struct filter_reach {
  double share = 1;
  bool dense = true;
};

filter_reach reach_of(const Xapian::Database& db, const filter_source::groups& groups);

/// A search's filters (`groups`: an AND of ORs of terms) as a query. As bit sets (filter_source)
/// when every group holds at least a 64th of the documents: a set costs a word per 64 documents
/// to combine, which only dense filters repay. Else as Xapian's boolean terms, which Xapian drives
/// by the shortest list (a small tenant's, in a large index): the work asked, not the index's size.
Xapian::Query filters_of(const std::shared_ptr<filter_sets>& sets,
                         const std::shared_ptr<const filter_source::groups>& groups, const filter_reach& reach);

}  // namespace cl::storage::search_detail
