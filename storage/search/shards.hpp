#pragma once
/// The search index's shards (storage-private): which shard holds a Resource, how document ids of
/// shards searched as one map to each shard's own, what a hit's record holds, and how one shard's
/// part of a batch is written.

#include "storage/search/terms.hpp"
#include "storage/search/types.hpp"
#include "storage/search/shard_documents.hpp"

#include <xapian.h>

#include <cstddef>
#include <exception>
#include <filesystem>
#include <future>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::storage::search_detail {

/// A hit's record, kept in the shard's documents (storage/search/shard_documents.hpp): what a hit shows,
/// and the text its snippet is cut from. Stored as the six fields NUL-separated, in this order.
struct hit_record {
  std::string_view id, title, type, language, work_id, text;
  /// The hit this record shows, ranked `score` (no snippet yet).
  search_hit hit(double score) const;
};

std::string encode_record(const indexed_resource& r);
/// The fields of a stored record (views into `data`).
hit_record decode_record(std::string_view data);

/// Xapian numbers the documents of `n` shards searched as one by interleaving them: document
/// `local` of shard `k` is `(local - 1) * n + k + 1`. These go between the two numberings.
struct shard_docid {
  std::size_t shard;
  Xapian::docid local;
};
shard_docid split_docid(Xapian::docid merged, std::size_t n);
Xapian::docid merge_docid(Xapian::docid local, std::size_t k, std::size_t n);

/// Which shard holds a Resource: FNV-1a of (tenant, id), stable across builds and machines (the
/// shard a document went to must be the one a later replace or removal finds it in).
std::size_t shard_of(const std::string& tenant, const std::string& id, std::size_t shards);

std::filesystem::path shard_path(const std::filesystem::path& dir, std::size_t k);

/// The shard directories present under `dir`.
std::size_t shard_dirs(const std::filesystem::path& dir);

/// The stemmer keys the index holds (its `XK` terms).
std::vector<std::string> index_keys_of(const Xapian::Database& db);

using metadata_list = std::vector<std::pair<std::string, std::string>>;

/// Builds and writes one shard's part of a batch (documents to replace or add, (tenant, id) to
/// remove) and `metadata`, not committed yet; documents get the pairs of `common` words.
void write_shard(Xapian::WritableDatabase& db, shard_documents& documents,
                 const std::vector<const indexed_resource*>& upserts,
                 const std::vector<const std::pair<std::string, std::string>*>& removed, const metadata_list& metadata,
                 const term_set& common);

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


}  // namespace cl::storage::search_detail
