// How the search index works inside (docs/architecture.md, "Search", says what and why):
//
// - **A page costs about a page, at any depth and index size**: stemming per document language;
//   BM25 folded into the wdf at indexing time (no document length read); snippets made by our own
//   scan around the first matched word (a page makes each language's stemmer once and stems a word
//   once, `snippet_maker`); each shard's documents (words in order, hit records, pair
//   sketches) kept beside it in LMDB; phrases checked by a match decider only for candidates that
//   would be answered, their words' AND filtered first by the buckets of their neighbouring words
//   (so a phrase checks about its hits, not every document holding its words); pairs of common
//   words indexed for two-word phrases; impact tiers so a common
//   word is ranked from its highest-weight documents first; a query whose matches are alike (every
//   word once, short documents: the same weight for all) ranked from the oldest documents of each
//   shard when the window's last hit holds every word at the index's highest wdf for it (no document
//   can weigh more, and ties go to the lower id; else the whole list), tried only where the index's
//   statistics allow it (each word's mean wdf at least 1 + a quarter of its highest above 1), so
//   other queries do not pay for the attempt; dense filters as shared bit
//   sets; the session's answered hits passed over as a posting source, not as terms.
// - **What a search asks of PostgreSQL**: a new search one statement (its session inserted with
//   the first page's hits, its commit not waited for on disk), a continued page two (its session
//   read, its hits added, waited for); the page's grants only while the index is behind what the node
//   knows of the log; the sweep on a sweeper actor. Figures: docs/benchmarks.md (bench/search).
// - **Commits of up to 2,000 changes** (`search.batch_max_changes`, and `_bytes`): a commit rewrites
//   the last chunk of the posting list of every word its batch holds, so smaller commits made
//   indexing fall with the index's size; larger ones were no faster.
// - **One budget of index rankings per answer** (8): the plan's rounds, the re-rankings past grants
//   revoked while the index lags and the index's own re-runs share it; out of budget, a page answers
//   what it has and is not exhausted.
// - **Readers open between batches** (a lock the batch's commits hold), so a reader sees a batch in
//   every shard or in none.
// - **Rebuilds run in the indexer, not before listening**: a missing, damaged or foreign index is
//   replaced by an empty one and rebuilt a page per commit (resumable); meanwhile searches answer 503
//   `SEARCH_INDEX_REBUILDING` rather than pages that silently miss Resources.
// - Files: `storage/search_index` (API, shards, query runner), `search_terms` (ranking, parsing, the
//   format list; Xapian 1.4 pinned), `search_filters`, `search_shards`, `search_phrases`,
//   `search_snippets`, `shard_documents`, `search_feed` (the change-log feed and the rebuild).

#include "storage/search/index.hpp"

#include "storage/search/filters.hpp"
#include "storage/search/phrases.hpp"
#include "storage/search/shards.hpp"
#include "storage/search/snippets.hpp"
#include "storage/search/terms.hpp"
#include "storage/search/shard_documents.hpp"

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

using namespace search_detail;

namespace {

constexpr const char* applied_key = "applied";
/// A rebuild in progress: the sequence it completes at, and the last record-store key it indexed.
constexpr const char* rebuild_target_key = "rebuild_target";
constexpr const char* rebuild_after_key = "rebuild_after";

/// The change-log position every one of `shards` holds: the least. Shards commit side by side: a
/// crash between two commits leaves some ahead, and the index resumes from the one behind
/// (applying a change again rebuilds the same document).
std::uint64_t applied_of(const std::vector<Xapian::Database>& shards) {
  std::optional<std::uint64_t> least;
  for (const auto& shard : shards) {
    auto v = shard.get_metadata(applied_key);
    std::uint64_t at = v.empty() ? 0 : std::stoull(v);
    least = least ? std::min(*least, at) : at;
  }
  return least.value_or(0);
}

/// The index format: an index of another is rebuilt at start. What forces a bump is listed in
/// storage/search/terms.hpp.
constexpr const char* format_key = "format";
constexpr const char* format_version = "13";

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
  /// The filters' document sets, shared by every search (storage/search/index.cpp: filter_sets).
  std::shared_ptr<filter_sets> filters = std::make_shared<filter_sets>();

  /// A read-only view of every shard for one search at a time, current as of the last commit.
  struct reader {
    std::unique_ptr<Xapian::Database> db;  ///< every shard, as one
    std::vector<Xapian::Database> shards;  ///< each shard alone (sharing `db`'s state: reopened with it)
    std::uint64_t generation = 0;
    std::uint64_t applied = 0;  ///< the change-log position `db` holds at this generation
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
    r.applied = applied_of(r.shards);
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
    metadata_list written{{applied_key, std::to_string(applied_seq)}, {format_key, format_version}};
    written.insert(written.end(), metadata.begin(), metadata.end());
    try {
      on_every_shard(shards.size(), [&](std::size_t k) {
        write_shard(shards[k]->db, shards[k]->documents, ups[k], gone[k], written, pairs);
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
      std::vector<const Xapian::Database*> dbs;
      for (const auto& shard : shards) dbs.push_back(&shard->db);
      if (held >= pairs_from_documents) common = choose_common(dbs, held);
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
  std::vector<std::unique_lock<std::mutex>> locks;
  std::vector<Xapian::Database> each;
  for (const auto& s : impl_->shards) {
    locks.emplace_back(s->mutex);
    each.push_back(s->db);
  }
  return applied_of(each);
}

std::size_t search_index::filter_cache_bytes() const { return impl_->filters->bytes(); }

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

namespace {

/// Runs `rank(exact)` (one ranking: a page, its hits' ids learnt) until no hit it should have
/// passed over comes back, or `left` runs out. A remembered document id is stale when its Resource
/// was removed and indexed again (another id): the hit then comes back; its new id is learnt and
/// the ranking runs again (`exact` from the third: every id looked up). Out of runs, the page drops
/// those hits and is not exhausted (what it dropped is ranked again on a later page).
template <class Rank>
search_page passing_over(const search_query& q, int& left, const Rank& rank) {
  for (int attempt = 0;; ++attempt) {
    --left;
    auto page = rank(attempt >= 2);
    page.runs = attempt + 1;
    auto passed = [&](const search_hit& h) { return q.skip && q.skip->count(h.id) > 0; };
    if (std::none_of(page.hits.begin(), page.hits.end(), passed)) return page;
    if (left <= 0) {
      page.hits.erase(std::remove_if(page.hits.begin(), page.hits.end(), passed), page.hits.end());
      page.exhausted = false;
      return page;
    }
  }
}

}  // namespace

search_page search_index::search(const search_query& q) const {
  int left = std::max(1, q.max_runs);
  const int budget = left;
  // A reader whose revision the writer has since overwritten throws DatabaseModifiedError: reopen
  // and run again (Xapian's documented way), while more than one run is left.
  while (left > 1) {
    int before = left;
    try {
      auto r = impl_->checkout();  // opening or reopening may meet a discarded revision too
      auto page = run({*r.db, r.shards, r.keys, r.common, r.documents}, q, left);
      page.applied = r.applied;
      impl_->give_back(std::move(r));
      page.runs = budget - left;
      return page;
    } catch (const Xapian::DatabaseModifiedError&) {
      // That reader is dropped; the next attempt takes (or opens) another at the last commit.
      if (left == before) --left;
    }
  }
  // The last run (commits keep overtaking this search): on the writers' databases, which cannot
  // change while their locks are held.
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
  auto page = run({all, each, keys, common, documents}, q, left);
  page.applied = applied_of(each);
  page.runs = budget - left;
  return page;
}

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
  return decode_record(*record).hit(score);
}

search_page search_index::run_metadata(const snapshot& at, const search_query& q, int& left) const {
  // Titles are short and few documents hold a query's title terms: Xapian's own phrase check (on
  // the title terms' positions) and no tiers, pairs or proximity. The weights are the whole
  // index's (`at.db`), so equal titles weigh the same in any shard.
  auto keys = stem_keys(at.keys, q.languages);
  auto groups = filter_groups(q);
  Xapian::Query ranked(Xapian::Query::OP_FILTER, parse(at.db, q.text, keys, true),
                       filters_of(impl_->filters, groups, reach_of(at.db, *groups)));
  Xapian::Enquire enquire{at.db};
  enquire.set_weighting_scheme(ranking());
  bool skipping = q.skip && !q.skip->empty();
  return passing_over(q, left, [&](bool exact) {
    search_page page;
    enquire.set_query(skipping ? Xapian::Query(Xapian::Query::OP_AND_NOT, ranked, skipped(at, q, exact)) : ranked);
    auto mset = enquire.get_mset(0, static_cast<Xapian::doccount>(q.page_size + 1));
    page.total_estimate = mset.get_matches_estimated();
    impl::learnt answered;
    for (auto it = mset.begin(); it != mset.end() && page.hits.size() < q.page_size; ++it) {
      auto h = hit_of(at, *it, it.get_weight());
      if (!h) continue;
      answered.emplace_back(unique_term(q.tenant, h->id), *it);
      page.hits.push_back(std::move(*h));
    }
    page.exhausted = mset.size() <= q.page_size;
    impl_->learn(answered);
    return page;
  });
}

namespace {

/// The text part of a full-text search: the query's stemmer keys and, per parse, its phrases
/// (checked against the word sequences; phrases of two common words are their pair terms instead)
/// and the words of the proximity bonus (queries of several words without a phrase: a phrase
/// already keeps its words together); the combined text query, the words its snippets mark.
struct text_plan {
  std::vector<std::string> keys;
  std::vector<word_order> orders;
  Xapian::Query text;
  marked_terms marks;
  std::size_t longest = 0;  ///< most words a parse's proximity bonus looks at
  bool phrased = false;     ///< some parse has a phrase to check
  std::shared_ptr<shard_marker::state> marker = std::make_shared<shard_marker::state>();
};

text_plan plan_text(const Xapian::Database& db, const std::vector<Xapian::Database>& shards, const term_set& common,
                    const std::vector<std::string>& index_keys, const search_query& q) {
  text_plan p;
  p.keys = stem_keys(index_keys, q.languages);
  auto parses = parse_each(db, q.text, p.keys, false);
  p.marks = terms_of(combine(parses, p.keys));
  p.orders.resize(p.keys.size());
  auto documents_held = static_cast<double>(db.get_doccount());
  auto dense = [&](const std::string& term) { return db.get_termfreq(term) >= dense_share * documents_held; };
  for (std::size_t i = 0; i < p.keys.size(); ++i) {
    p.orders[i].key = word_hash(p.keys[i]);
    if (q.text.find('"') == std::string::npos) {
      std::vector<std::string> words;
      for (auto t = parses[i].get_terms_begin(); t != parses[i].get_terms_end(); ++t)
        if (text_term(*t)) words.push_back(*t);
      p.orders[i].words = word_run{std::move(words)};
    }
    p.longest = std::max(p.longest, p.orders[i].words.terms.size());
    parses[i] = lift_phrases(with_pairs(parses[i], common), p.orders[i].phrases, dense);
  }
  // Phrases are checked against the word sequences by a match decider, which needs the shard of
  // each candidate: one marker over the whole text query tells it (one per parse would be asked
  // about each parse's own next document, not the candidate's).
  p.text = combine(parses, p.keys);
  for (const auto& shard : shards) p.marker->uuids.push_back(shard.get_uuid());
  p.phrased = std::any_of(p.orders.begin(), p.orders.end(), [](const word_order& o) { return !o.phrases.empty(); });
  if (p.phrased) {
    shard_marker marker{p.marker};
    p.text = Xapian::Query(Xapian::Query::OP_FILTER, p.text, Xapian::Query(marker.clone()->release()));
  }
  return p;
}

/// The highest level of the impact tiers of a search's one common word or pair expected to fill
/// `wanted` candidates through its filters (0: none, or the search is not one such term with
/// nothing to check or reorder; sparse filters drive the query by their own short lists instead).
/// Sets `term` to the tiered term.
int top_tier(const Xapian::Database& db, const text_plan& p, const filter_reach& reach, const term_set& common,
             double wanted, std::string& term) {
  if (p.phrased || p.longest > 1 || !reach.dense || p.text.get_type() != Xapian::Query::LEAF_TERM) return 0;
  std::string only = *p.text.get_terms_begin();
  if (only.rfind("XP", 0) != 0 && !common.count(only)) return 0;
  term = std::move(only);
  for (int level = max_tier; level >= 1; --level)
    if (db.get_termfreq(tier_term(level, term)) * reach.share >= wanted) return level;
  return 0;
}

/// Whether document `did` holds every term of `text` at the term's highest wdf in `db` (the upper
/// bound the index keeps; a bound above every document's wdf, after deletions, says no).
bool at_highest_weight(const Xapian::Database& db, Xapian::docid did, const Xapian::Query& text) {
  auto terms = db.termlist_begin(did);
  for (auto t = text.get_unique_terms_begin(); t != text.get_unique_terms_end(); ++t) {
    terms.skip_to(*t);  // both in ascending order
    if (terms == db.termlist_end(did) || *terms != *t || terms.get_wdf() != db.get_wdf_upper_bound(*t)) return false;
  }
  return true;
}

/// Whether, for every term of `text`, a quarter of the documents holding it could hold it at its
/// highest wdf: its mean wdf is at least 1 + (upper bound - 1) / 4, the others holding it at least
/// once. From statistics only. Only then can a prefix of a shard be expected to fill the window at
/// the highest weight, so queries whose words are spread unevenly do not pay for trying.
bool alike_enough(const Xapian::Database& db, const Xapian::Query& text) {
  for (auto t = text.get_unique_terms_begin(); t != text.get_unique_terms_end(); ++t) {
    auto holding = db.get_termfreq(*t);
    if (holding == 0) return false;
    auto mean = static_cast<double>(db.get_collection_freq(*t)) / static_cast<double>(holding);
    if (mean < 1.0 + (static_cast<double>(db.get_wdf_upper_bound(*t)) - 1.0) / 4.0) return false;
  }
  return true;
}

/// A ranked candidate of the window, with its score after the proximity bonus.
struct candidate {
  Xapian::MSetIterator it;
  double score;
};

/// `mset` in order of score after the proximity bonus (several words: a hit whose words stand
/// together gains up to `proximity_boost` of its score).
std::vector<candidate> with_proximity(const Xapian::MSet& mset, const Xapian::Database& db,
                                      const std::vector<shard_documents::reader>& documents, const text_plan& p) {
  std::vector<candidate> order;
  auto n = documents.size();
  for (auto it = mset.begin(); it != mset.end(); ++it) {
    double score = it.get_weight();
    if (p.longest > 1) {
      auto place = split_docid(*it, n);
      document_words doc{documents[place.shard], place.local};
      double best = 0;
      for (const auto* o : orders_of(p.orders, doc.key())) best = std::max(best, adjacent_share(db, *it, doc, o->words));
      score *= 1 + proximity_boost * best;
    }
    order.push_back({it, score});
  }
  std::stable_sort(order.begin(), order.end(), [](const candidate& a, const candidate& b) { return a.score > b.score; });
  return order;
}

}  // namespace

search_page search_index::run(const snapshot& at, const search_query& q, int& left) const {
  if (q.metadata_only) return run_metadata(at, q, left);
  const auto& db = at.db;
  auto n = at.shards.size();
  auto plan = plan_text(db, at.shards, at.common, at.keys, q);
  phrase_check check{db, at.documents, plan.orders, plan.marker};
  auto groups = filter_groups(q);
  auto reach = reach_of(db, *groups);
  Xapian::Query ranked(Xapian::Query::OP_FILTER, plan.text, filters_of(impl_->filters, groups, reach));
  // Several words: rank a window of two pages by BM25, then reorder it with the proximity bonus.
  auto window = plan.longest > 1 ? 2 * q.page_size + 1 : q.page_size + 1;
  std::string tiered;
  int top_level = top_tier(db, plan, reach, at.common, 2.0 * static_cast<double>(window + (q.skip ? q.skip->size() : 0)), tiered);
  Xapian::Enquire enquire{db};
  enquire.set_weighting_scheme(ranking());
  bool skipping = q.skip && !q.skip->empty();
  return passing_over(q, left, [&](bool exact) {
    search_page page;
    auto passed_over = skipping ? skipped(at, q, exact) : Xapian::Query{};
    auto without_skipped = [&](const Xapian::Query& query) {
      return skipping ? Xapian::Query(Xapian::Query::OP_AND_NOT, query, passed_over) : query;
    };
    Xapian::MSet mset;
    bool filled = false;  // by a level of the impact tiers: the same window as the whole list's
    for (int level = top_level; level >= 1 && !filled; --level) {
      enquire.set_query(without_skipped(Xapian::Query(Xapian::Query::OP_FILTER, ranked, Xapian::Query(tier_term(level, tiered)))));
      mset = enquire.get_mset(0, static_cast<Xapian::doccount>(window));
      filled = mset.size() == window;
      if (filled) page.tier_level = level;
    }
    enquire.set_query(without_skipped(ranked));
    if (!filled && !plan.phrased && plan.keys.size() == 1 && alike_enough(db, plan.text)) {
      // Every hit of the window at the highest weight any document can have (documents alike, as
      // many short ones are): the oldest such documents answer it, since ties go to the lower id.
      // Ranked among a prefix of each shard large enough to expect the window a few times over;
      // kept only when its window is full and its last hit holds every word of the query at the
      // word's highest wdf in the index (BM25 with b = 0 grows with the wdf alone: no document can
      // weigh more), else the whole list. Tried only where the index's statistics say documents
      // are alike enough for it to answer.
      auto stats = enquire.get_mset(0, 0);  // from statistics, no postings read
      auto wanted = 4.0 * static_cast<double>(window + (q.skip ? q.skip->size() : 0));
      auto matches = std::max<double>(1, stats.get_matches_estimated());
      if (wanted < matches / 2) {
        auto last = static_cast<double>(db.get_lastdocid());
        auto local = static_cast<Xapian::docid>(std::ceil(last * wanted / matches / static_cast<double>(n)));
        enquire.set_query(without_skipped(
          Xapian::Query(Xapian::Query::OP_FILTER, ranked, Xapian::Query(docid_prefix(local).clone()->release()))));
        mset = enquire.get_mset(0, static_cast<Xapian::doccount>(window));
        filled = mset.size() == window && at_highest_weight(db, *mset[window - 1], plan.text);
        if (filled) {
          page.prefix_ranked = true;
          page.total_estimate = stats.get_matches_estimated();
        }
        enquire.set_query(without_skipped(ranked));
      }
    }
    if (filled) {
      if (!page.prefix_ranked) page.total_estimate = enquire.get_mset(0, 0).get_matches_estimated();  // from statistics, no postings read
    } else {
      mset = enquire.get_mset(0, static_cast<Xapian::doccount>(window), 0, nullptr, plan.phrased ? &check : nullptr);
      page.total_estimate = mset.get_matches_estimated();
    }
    auto order = with_proximity(mset, db, at.documents, plan);
    impl::learnt answered;  // answered hits are known by document id on the session's next page
    snippet_maker snippets{plan.marks};
    for (std::size_t i = 0; i < order.size() && page.hits.size() < q.page_size; ++i) {
      auto at_shard = split_docid(*order[i].it, n);
      auto record = at.documents[at_shard.shard].record(at_shard.local);
      if (!record) continue;  // removed by a batch whose Xapian commit this search does not see yet
      auto fields = decode_record(*record);
      auto h = fields.hit(order[i].score);
      answered.emplace_back(unique_term(q.tenant, h.id), *order[i].it);
      h.snippet = snippets.of(fields.text, h.language, 200);
      page.hits.push_back(std::move(h));
    }
    page.exhausted = mset.size() <= q.page_size;
    impl_->learn(answered);
    return page;
  });
}

}  // namespace cl::storage
