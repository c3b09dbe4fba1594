#pragma once
/// Keeps the search index in step with the record store (issue 14), fed only from the change log:
/// every change to a Resource (create, replace, patch, promotion, snapshot, grant, revoke) makes its
/// document be rebuilt from the store as it is now (or removed when the Resource is gone). Contract
/// changes alter no document (rights are resolved when a search answers). The indexer actor calls
/// `catch_up` in batches; a crash loses nothing: the index's applied sequence is committed with the
/// documents, and the next start resumes after it.

#include "storage/search/index.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cl::storage {

class read_view;
class record_store;

/// (tenant, id) of a Resource.
using resource_key = std::pair<std::string, std::string>;

/// The documents of the Resources `keys` names, as `view` sees them, in the same order (nullopt: it
/// does not exist); each (tenant, id) once. Per tenant among them: one read of the records and one
/// of their grants.
std::vector<std::optional<indexed_resource>> index_entries(const read_view& view, const std::vector<resource_key>& keys);

/// What one catch-up did.
struct catch_up_result {
  std::size_t changes = 0;    ///< change-log entries applied
  std::size_t documents = 0;  ///< documents rebuilt or removed
  std::uint64_t applied = 0;  ///< the index's applied sequence after it
  bool more = false;          ///< stopped at a bound: more changes may be waiting
};

/// Change-log entries (or, rebuilding, Resources) one index commit takes at most by default: a
/// commit rewrites the posting-list tail of every word its batch holds, so fewer, larger commits
/// index faster as the index grows (docs/architecture.md, Search, "Commits of up to 2,000 changes").
inline constexpr std::size_t default_batch_changes = 2000;

/// Text (titles and texts) one index commit holds at most, unless its first document alone is
/// larger: bounds the indexer's memory whatever the batch size and the Resources' sizes.
inline constexpr std::size_t default_batch_text_bytes = std::size_t{64} << 20;

/// What a rebuild did.
struct rebuild_result {
  std::uint64_t documents = 0;
  std::uint64_t applied = 0;  ///< the change-log sequence the rebuilt index starts from
};

/// Rebuilds the index at `dir` from the record store's Resources (not from the change log, which
/// retention may have shortened): into `<dir>.rebuild`, then one rename replaces `dir`. The index
/// starts from the last change committed before the scan; the indexer applies what came after
/// (rebuilding a document twice is harmless).
rebuild_result rebuild_index(const std::filesystem::path& dir, const record_store& store, std::size_t page = default_batch_changes,
                             std::size_t max_text_bytes = default_batch_text_bytes);

/// What one page of a rebuild did.
struct rebuild_step_result {
  std::size_t documents = 0;  ///< Resources indexed by this page
  bool done = false;          ///< the rebuild completed (the index catches up from the change log now)
};

/// One page of the rebuild in progress on `index` (search_index::begin_rebuild): up to `page`
/// Resources after the last one it indexed, in record-store key order, as one commit, and no more
/// than `max_text_bytes` of text past the first. The indexer runs it while the service serves;
/// `rebuild_index` runs it to the end.
rebuild_step_result rebuild_step(search_index& index, const record_store& store, std::size_t page,
                                 std::size_t max_text_bytes = default_batch_text_bytes);

/// The change log no longer holds the entries right after the index's applied sequence (retention
/// trimmed them): only a rebuild from the record store brings the index back.
struct change_log_gap : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Whether the change log still holds every entry after `applied` (its oldest is at most the next).
bool log_continues_after(const record_store& store, std::uint64_t applied);

/// Applies up to `max_changes` change-log entries after the index's applied sequence, as one
/// commit (a Resource changed several times in the batch is rebuilt once), and stops after the
/// change whose document takes the batch's text to `max_text_bytes`. Throws `change_log_gap` when the
/// log was trimmed past the index.
catch_up_result catch_up(search_index& index, const record_store& store, std::size_t max_changes,
                         std::size_t max_text_bytes = default_batch_text_bytes);

}  // namespace cl::storage
