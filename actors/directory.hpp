#pragma once
/// Where the current handles of the concern actors live. The supervisor replaces a handle when it
/// restarts an actor; each request takes one consistent snapshot.

#include "actors/interfaces.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

namespace cl::actors {

/// Handles of every concern actor at one moment. A handle may be dead (restart in progress):
/// asking it fails at once and the request answers 503.
struct concern_handles {
  auth_actor auth;
  rate_limiter_actor rate_limiter;
  reader_actor reader;
  writer_actor writer;
  rights_actor rights;
};

/// Thread-safe holder of the current `concern_handles`.
class actor_directory {
public:
  actor_directory() : current_(std::make_shared<const concern_handles>()) {}

  /// The handles as of now; cheap, lock-free for readers.
  std::shared_ptr<const concern_handles> snapshot() const { return std::atomic_load(&current_); }

  /// Copies the handles, lets `change` edit the copy, publishes it.
  void update(const std::function<void(concern_handles&)>& change) {
    std::lock_guard<std::mutex> guard{write_mutex_};
    auto next = std::make_shared<concern_handles>(*std::atomic_load(&current_));
    change(*next);
    std::atomic_store(&current_, std::shared_ptr<const concern_handles>{std::move(next)});
  }

  /// Drops every handle (shutdown: the actor system waits for actors that are still referenced).
  void clear() {
    std::lock_guard<std::mutex> guard{write_mutex_};
    std::atomic_store(&current_, std::make_shared<const concern_handles>());
  }

private:
  std::mutex write_mutex_;
  std::shared_ptr<const concern_handles> current_;
};

/// Health flags the admin listener reports; written by actors, read by /readyz.
struct service_health {
  std::atomic<bool> keys_loaded{false};
  std::atomic<bool> draining{false};
  std::atomic<int> children_down{0};
};

}  // namespace cl::actors
