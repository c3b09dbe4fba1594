#pragma once
/// `contentlake migrate --from A --to B`: every record from one record store into another (an LMDB
/// data dir or a PostgreSQL connection string on either side), resumable, then verified.

#include "config/settings.hpp"

#include <string>

namespace cl::app {

struct migrate_options {
  std::string from, to;  ///< a data dir, or a PostgreSQL URL (postgresql://... or key=value ...)
  std::string state;     ///< a progress file; by default the progress is kept with the target (record_stores.hpp)
  bool resume = false;   ///< go on from the progress file (and accept a target that holds records)
};

/// Runs it with `base` (the configuration as `serve` reads it: a password file, the pool size);
/// the exit code: 0 copied and verified, 1 failed or differs, 2 refused (a target that holds
/// records, or a directory that is not a data dir). Nothing in the source changes, refused or not.
int migrate(const config::settings& base, const migrate_options& options);

}  // namespace cl::app
