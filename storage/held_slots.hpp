#pragma once
/// Held requests (event streams and long polls of the change feed) counted where every node sees
/// the count at once, so a principal's or a client's limit holds across nodes, however many and
/// however quickly their requests arrive: one slot per held request, taken atomically against the
/// limits, given back when the request ends. On one node there is nothing to share (the feed's own
/// count, actors/events/changes_feed.hpp, is the whole truth).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace cl::storage {

class held_slot_store {
public:
  virtual ~held_slot_store() = default;

  /// Which limit refused a slot.
  enum class full { none, holder, client };

  /// A slot for a request of `holder` through `client`, unless `holder` already holds `per_holder`
  /// slots or `client` `per_client` on any node (then nullopt, and `*why` says which). Throws when
  /// the store cannot be reached.
  virtual std::optional<std::uint64_t> take(const std::string& holder, const std::string& client,
                                            std::size_t per_holder, std::size_t per_client, full* why) = 0;

  /// Gives slot `id` back, without waiting (callable from any thread; the slot is freed for every
  /// node within moments, and at once for this node's next `take`).
  virtual void give_back(std::uint64_t id) = 0;

  /// One round of upkeep where no thread of the store's does it (the service's supervised
  /// `held-slots` ticker): slots given back leave the count of every node, the live ones are kept
  /// alive. Answers how long until the next round; zero: none is needed. Throws when the store
  /// cannot be reached.
  virtual std::chrono::milliseconds keep() { return std::chrono::milliseconds{0}; }
};

}  // namespace cl::storage
