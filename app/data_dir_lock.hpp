#pragma once
/// One contentlake process per data dir. `serve` and `reindex` hold `<data_dir>/lock` with an
/// exclusive `flock` for as long as they run: a second one on the same dir stops at once with a
/// clear message, before it opens anything (its search index would otherwise take the files the
/// first one writes for damaged, and rebuild them under it). The kernel drops the lock when the
/// process ends, however it ends: a stale file blocks nothing.

#include <string>

namespace cl::app {

class data_dir_lock {
public:
  /// Takes the lock, creating the file if needed (`create`; without it a dir that has no lock file,
  /// where no `serve` ever ran, is left as it is: nothing is created in a dir that is only read).
  /// Throws std::runtime_error naming the dir when another process (or another service in this
  /// one) holds it, or when it cannot be opened.
  explicit data_dir_lock(const std::string& data_dir, bool create = true);
  ~data_dir_lock();
  data_dir_lock(const data_dir_lock&) = delete;
  data_dir_lock& operator=(const data_dir_lock&) = delete;

private:
  int fd_ = -1;
};

}  // namespace cl::app
