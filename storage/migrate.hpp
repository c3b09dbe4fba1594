#pragma once
/// Moving every record from one record store to another, whatever their backends
/// (`contentlake migrate`): each kind in turn, a page at a time, written through the target's typed
/// stores (which build its indexes), the change log with its own numbers and the consumers'
/// positions; resumable from the last page written; then a verification on both sides.

#include "storage/record_store.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cl::storage {

/// What a migration has copied: per kind, the position after which it goes on ("done" when the
/// kind is complete). Kept by the caller between runs (a file) to resume.
using migration_progress = std::map<std::string, std::string>;

/// Where a migration's progress is kept between runs: with its target, never its source (a
/// source is only read). A file in a directory target; a table of a PostgreSQL target.
class migration_state {
public:
  virtual ~migration_state() = default;
  /// What was saved last; empty when nothing was.
  virtual migration_progress load() = 0;
  /// Replaces what is saved with `p` (all or nothing).
  virtual void save(const migration_progress& p) = 0;
  /// Where it is kept, for messages (never a connection string).
  virtual std::string where() const = 0;
};

/// Progress kept in the file at `path` (a line per kind; replaced by a rename, so a crash keeps the
/// last whole save).
std::unique_ptr<migration_state> migration_state_file(std::string path);

/// Told after each page: the kind, how many of it were copied so far in this run.
using migration_report = std::function<void(const std::string& kind, std::uint64_t copied)>;

/// True when `store` holds any record or change (a target must be empty unless resuming).
bool holds_records(const record_store& store);

/// Copies what `progress` says is not yet copied from `from` into `to`, kind by kind, updating
/// `progress` and calling `save` after every page written (the caller persists it) and `report`.
void migrate_records(const record_store& from, record_store& to, migration_progress& progress,
                     const std::function<void(const migration_progress&)>& save, const migration_report& report);

/// One kind's count on each side, and what differs.
struct migration_check {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> counts;  ///< kind -> (source, target)
  std::vector<std::string> differences;  ///< empty when both sides hold the same
};

/// Counts every kind on both sides and compares every Resource's record byte for byte (so its
/// `hash`, and the ETag it answers, are the same), every grant, contract version and the change log.
migration_check verify_migration(const record_store& from, const record_store& to);

}  // namespace cl::storage
