#pragma once
/// Where the current handles of the concern actors live. The supervisor replaces a handle when it
/// restarts an actor; each request takes one consistent snapshot.

#include "actors/interfaces.hpp"
#include "actors/shared_cache.hpp"
#include "actors/token_cache.hpp"
#include "domain/access.hpp"
#include "domain/rights.hpp"

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace cl::storage {
class record_store;
}

namespace cl::actors {

class metrics;
class representation_cache;
class rate_table;

/// The platform policy in force, published by the rights resolver for writes that resolve rights
/// inside their own transaction.
class policy_holder {
public:
  std::shared_ptr<const domain::platform_policy> get() const {
    std::lock_guard<std::mutex> guard{mutex_};
    return policy_;
  }
  void set(domain::platform_policy p) {
    auto next = std::make_shared<const domain::platform_policy>(std::move(p));
    std::lock_guard<std::mutex> guard{mutex_};
    policy_ = std::move(next);
  }

private:
  mutable std::mutex mutex_;
  std::shared_ptr<const domain::platform_policy> policy_ = std::make_shared<const domain::platform_policy>();
};

/// The slot of interface `Handle` in `concern_handles::actors`: numbered on first use, the same
/// for the whole process (an inline function's static is one object across translation units).
std::size_t next_mailbox_slot();
template <class Handle>
std::size_t slot_of() {
  static const std::size_t slot = next_mailbox_slot();
  return slot;
}

/// Handles of every concern actor at one moment. A handle may be dead (restart in progress):
/// asking it fails at once and the request answers 503.
struct concern_handles {
  /// The handle of mailbox `Handle` (any typed actor interface: a route group declares its own
  /// in its own header); empty until its actor started.
  template <class Handle>
  const Handle get() const {  // const: assigning to it (not `set`) does not compile
    auto slot = slot_of<Handle>();
    return slot < actors.size() ? caf::actor_cast<Handle>(actors[slot]) : Handle{};
  }
  /// Publishes `handle` as the mailbox of its interface.
  template <class Handle>
  void set(const Handle& handle) {
    auto slot = slot_of<Handle>();
    if (actors.size() <= slot) actors.resize(slot + 1);
    actors[slot] = caf::actor_cast<caf::actor>(handle);
  }

  /// One handle per supervised interface, at its slot (`slot_of`). Reader views differ only in
  /// their reader.
  std::vector<caf::actor> actors;
  /// Verified tokens the auth actor filled; a hit saves the coordinator its ask to auth.
  std::shared_ptr<const token_cache> tokens;
  /// Resolutions the rights resolver filled, by `rights_cache_key`; a hit saves the ask to it.
  std::shared_ptr<const shared_cache<std::shared_ptr<const domain::resolved_rights>>> rights_cache;
  /// Whether the tenant's contracts can allow, and can refuse, a use somewhere (the rights
  /// resolver's `possible` answer), by `possible_cache_key`; a hit saves the ask to it.
  std::shared_ptr<const shared_cache<std::pair<bool, bool>>> possible_cache;
  /// Bumped after every change of a resolution's inputs (a contract write, a policy change):
  /// cached resolutions of an earlier epoch are never found again.
  std::shared_ptr<std::atomic<std::uint64_t>> rights_epoch;
  /// The policy the rights resolver uses now (writes answer with rights resolved in their txn).
  std::shared_ptr<const policy_holder> policy;
  /// Every client's rate limit bucket (actors/rate_limiter.hpp), decided in place; when null the
  /// rate limiter actor is asked.
  std::shared_ptr<rate_table> rates;
  /// Renderings of Resources the coordinators made (actors/representation_cache.hpp); may be null.
  std::shared_ptr<representation_cache> representations;
  /// Roles the access actor found, by `access_cache_key` (actors/access.hpp); a hit saves the ask.
  std::shared_ptr<const shared_cache<domain::access_role>> access_cache;
  /// Bumped after every grant write and directory change: earlier cached roles are never found.
  std::shared_ptr<std::atomic<std::uint64_t>> access_epoch;
  /// Bumped when something the change log does not record moves what reads answer: the platform
  /// policy or the group directory changed (or an actor that watches them restarted and may have
  /// missed a change). The edge purger then purges every cached answer.
  std::shared_ptr<std::atomic<std::uint64_t>> outside_changes;  ///< set by actor_directory, shared by its views
  /// Where plans count what failed them (`contentlake_backend_errors_total`); may be null.
  std::shared_ptr<metrics> stats;
  /// The record store, for the change-log position a write answers with and the position a read
  /// asks for (`Content-Lake-Position`); may be null (then neither).
  std::shared_ptr<storage::record_store> records;

  /// True while the caches above (rights, possible answers, access roles) may answer: this node's
  /// view of the change log is within the bound another node's change may be missing from them
  /// (`storage::record_store::caches_current`); else plans ask the concern actors, which read the
  /// database.
  bool caches_current() const { return !records || records->caches_current(); }
};

/// The key of a resolution in `concern_handles::rights_cache`.
inline std::string rights_cache_key(const std::string& tenant, const std::string& work_id, std::uint64_t epoch) {
  return tenant + '\0' + work_id + '\0' + std::to_string(epoch);
}

/// The key of a `possible` answer in `concern_handles::possible_cache`.
inline std::string possible_cache_key(const std::string& tenant, const std::string& usage, std::uint64_t epoch) {
  return tenant + '\0' + usage + '\0' + std::to_string(epoch);
}

/// Thread-safe holder of the current `concern_handles`. It keeps one view per reader actor,
/// identical but for `reader`; `snapshot` rotates over the views, so reads spread over readers.
class actor_directory {
public:
  explicit actor_directory(std::size_t readers = 1) : views_(readers == 0 ? 1 : readers) {
    // One counter of outside changes for every view (each view is a copy of the handles).
    auto outside = std::make_shared<std::atomic<std::uint64_t>>(0);
    for (auto& v : views_) {
      auto handles = std::make_shared<concern_handles>();
      handles->outside_changes = outside;
      v = std::move(handles);
    }
  }

  /// The handles as of now; cheap, lock-free for readers.
  std::shared_ptr<const concern_handles> snapshot() const {
    auto i = next_.fetch_add(1, std::memory_order_relaxed) % views_.size();
    return std::atomic_load(&views_[i]);
  }

  /// Copies the handles of every view, lets `change` edit each copy, publishes them.
  void update(const std::function<void(concern_handles&)>& change) {
    std::lock_guard<std::mutex> guard{write_mutex_};
    for (auto& view : views_) {
      auto next = std::make_shared<concern_handles>(*std::atomic_load(&view));
      change(*next);
      std::atomic_store(&view, std::shared_ptr<const concern_handles>{std::move(next)});
    }
  }

  /// Publishes `handle` in every view (after a start or a restart).
  template <class Handle>
  void publish(const Handle& handle) {
    update([&](concern_handles& h) { h.set(handle); });
  }

  /// Publishes `handle` in view number `index` only: an actor of which several run (the readers),
  /// one per view.
  template <class Handle>
  void publish(std::size_t index, const Handle& handle) {
    std::lock_guard<std::mutex> guard{write_mutex_};
    auto& view = views_.at(index % views_.size());
    auto next = std::make_shared<concern_handles>(*std::atomic_load(&view));
    next->set(handle);
    std::atomic_store(&view, std::shared_ptr<const concern_handles>{std::move(next)});
  }

  /// How many views (one per reader) the snapshots rotate over.
  std::size_t readers() const { return views_.size(); }

  /// Drops every handle (shutdown: the actor system waits for actors that are still referenced).
  void clear() {
    std::lock_guard<std::mutex> guard{write_mutex_};
    for (auto& view : views_) std::atomic_store(&view, std::make_shared<const concern_handles>());
  }

private:
  std::mutex write_mutex_;
  std::vector<std::shared_ptr<const concern_handles>> views_;
  mutable std::atomic<std::size_t> next_{0};
};

/// Health flags the admin listener reports; written by actors, read by /readyz.
struct service_health {
  std::atomic<bool> keys_loaded{false};
  std::atomic<bool> draining{false};
  std::atomic<int> children_down{0};

  /// A flag a route group declares from its own files; /readyz reports it under its name, and
  /// answers 503 while a `required` one is false.
  struct check {
    std::string name;
    bool required = false;
    std::shared_ptr<std::atomic<bool>> value;
  };
  /// Declares check `name` (false until set); declared again, the same flag.
  std::shared_ptr<std::atomic<bool>> declare_check(const std::string& name, bool required) {
    std::lock_guard lock{mutex_};
    for (const auto& c : checks_)
      if (c.name == name) return c.value;
    checks_.push_back({name, required, std::make_shared<std::atomic<bool>>(false)});
    return checks_.back().value;
  }
  /// Every declared check, in declaration order.
  std::vector<check> checks() const {
    std::lock_guard lock{mutex_};
    return checks_;
  }

private:
  mutable std::mutex mutex_;
  std::vector<check> checks_;
};

}  // namespace cl::actors
