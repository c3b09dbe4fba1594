#pragma once
/// The search index (issue 14): a Xapian database under the data dir, derived from LMDB and fed
/// only from the change log. It never holds rights (they are resolved when a search answers) and it
/// is never the truth: `contentlake reindex` rebuilds it from the record store.
///
/// One document per Resource: unique term `Q<tenant>\0<id>`; boolean filter terms `XT<tenant>`,
/// `XY<type>`, `XL<language>`, `XW<work id>`, `XS1`/`XS0` (staged or attached) and `XR<principal>`
/// for every principal holding a grant (layer 2 is part of the query, so pages never come back
/// short); free text as `Z` stems of the Resource's language, with positions (words as written
/// where no stemmer applies), and `XK<stemmer>` saying which (title also under prefix `S`, for
/// `title:`); each document's words in order in a store beside each shard
/// (storage/search/shard_documents.hpp), for phrase and proximity checks, with what a hit shows. Pairs
/// of neighbouring common words as `XP<term> <term>` (no positions), for phrases of such words;
/// the common words chosen once, in metadata `common_terms`. Impact tiers of the common words and
/// pairs as `XI<level><term>` (boolean), where a query of one such term finds its best documents.
/// The last applied change-log sequence is each shard's metadata `applied`, committed with the
/// documents it covers; `format` names the layout (another one is rebuilt).
///
/// The index is split into shards (`<dir>/shard-<k>`, a Resource's shard chosen by a stable hash of
/// its tenant and id), each a Xapian database with its own writer: a batch is written to all shards
/// in parallel, and a search reads them as one database. Shard k's word sequences are in
/// `<dir>/documents-<k>`.

#include "storage/content_stores.hpp"
#include "storage/search/types.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace Xapian {
class Database;
class Query;
}

namespace cl::storage {

class search_index {
public:
  /// Two writers: what this 2-core box indexes fastest with while it also serves writes.
  static constexpr std::size_t default_shards = 2;

  /// Opens (creating) the index at `dir` with `shards` shards; throws std::runtime_error when it is
  /// unreadable, of another format or another number of shards (the caller rebuilds it).
  explicit search_index(std::filesystem::path dir, std::size_t shards = default_shards);
  ~search_index();
  search_index(const search_index&) = delete;
  search_index& operator=(const search_index&) = delete;

  /// The last change-log sequence whose effects the index holds (0: none).
  std::uint64_t applied() const;

  /// Replaces or adds `upserts`, removes `removed` ((tenant, id)), and records `applied_seq`, in one
  /// commit.
  void apply(const std::vector<indexed_resource>& upserts, const std::vector<std::pair<std::string, std::string>>& removed,
             std::uint64_t applied_seq);

  /// A rebuild from the record store, done page by page while the service serves (and resumed
  /// after a restart): the change-log sequence it completes at, the last Resource indexed.
  struct rebuild_progress {
    std::uint64_t target = 0;
    resource_position after;
  };
  /// Starts a rebuild of this (empty) index towards `target`, recorded in the index.
  void begin_rebuild(std::uint64_t target);
  /// One page of the rebuild: `docs`, up to Resource `after`; `last` completes it (the
  /// index then holds everything up to the target and catches up from the change log).
  void apply_rebuild(const std::vector<indexed_resource>& docs, const resource_position& after, bool last);
  /// The rebuild in progress, if any (reads the index).
  std::optional<rebuild_progress> rebuilding() const;
  /// Whether a rebuild is in progress (no read: for every search).
  bool is_rebuilding() const noexcept;

  /// The next page of `q`, ranked, skipping `q.skip`; throws query_syntax_error.
  search_page search(const search_query& q) const;

  /// True when another writer (a running service) holds the index at `dir`.
  static bool in_use(const std::filesystem::path& dir);

  /// The index format this build reads and writes (an index of another is rebuilt at start).
  static const char* format() noexcept;

  /// How many documents the index holds.
  std::uint64_t documents() const;

  /// Bytes of the filters' document sets held for searches (1 bit a document a filter term; at
  /// most 64 MiB): they grow with the documents and the filter terms searched, then stay.
  std::size_t filter_cache_bytes() const;

private:
  /// What one search reads: every shard as one, each alone, and what goes with them.
  struct snapshot;
  /// One search on `at`, spending rankings from `left` (at least one; more while a remembered id
  /// turns out stale).
  search_page run(const snapshot& at, const search_query& q, int& left) const;
  search_page run_metadata(const snapshot& at, const search_query& q, int& left) const;
  /// `q.skip` as a query of their document ids, each in its own shard: known from an earlier
  /// answer (as numbered across shards), else one lookup of the unique term in its shard
  /// (`exact`: all of them looked up).
  Xapian::Query skipped(const snapshot& at, const search_query& q, bool exact) const;
  /// The hit a document of the answer shows (nullopt: removed by a batch whose Xapian commit this
  /// search does not see yet).
  std::optional<search_hit> hit_of(const snapshot& at, unsigned docid, double score) const;  // Xapian::docid

  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cl::storage
