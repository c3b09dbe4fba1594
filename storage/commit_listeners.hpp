#pragma once
/// The listeners of a record store's commits (storage-internal): `record_store::subscribe` and
/// `unsubscribe` for every backend, called after each durable commit that logged changes.

#include "storage/record_store.hpp"

#include <map>
#include <mutex>
#include <vector>

namespace cl::storage {

class commit_listeners {
public:
  std::uint64_t add(record_store::commit_listener listener) {
    std::lock_guard<std::mutex> guard{mutex_};
    listeners_.emplace(++handles_, std::move(listener));
    return handles_;
  }

  void remove(std::uint64_t handle) {
    std::lock_guard<std::mutex> guard{mutex_};
    listeners_.erase(handle);
  }

  /// Tells every listener (outside the lock: a listener may subscribe or unsubscribe).
  void notify(std::uint64_t last_seq) const {
    std::vector<record_store::commit_listener> copy;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      for (const auto& [handle, l] : listeners_) copy.push_back(l);
    }
    for (const auto& l : copy) l(last_seq);
  }

private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, record_store::commit_listener> listeners_;
  std::uint64_t handles_ = 0;
};

}  // namespace cl::storage
