#pragma once
/// A backend's table of typed store implementations, by kind (storage-internal): what
/// `kv::implement` and `pg::implement` fill at static initialisation and the backend's views make
/// their stores from. `Context` is what the backend hands a store (its reads, writes, view).

#include "storage/typed_store.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cl::storage {

template <class Context>
class store_registry {
public:
  using factory = std::unique_ptr<typed_store> (*)(const Context&);

  /// The registry of the backend `Context` belongs to.
  static store_registry& of() {
    static store_registry r;
    return r;
  }

  void add(store_kind kind, factory make) {
    if (makers_.size() <= kind.slot) makers_.resize(kind.slot + 1);
    makers_[kind.slot] = make;
  }

  /// The implementation of the store at `slot`, made over `c`; throws when none is linked in.
  std::unique_ptr<typed_store> make(std::size_t slot, const Context& c) const {
    if (slot >= makers_.size() || !makers_[slot])
      throw std::logic_error(std::string{"a typed store has no implementation linked in for the "} + Context::backend
                             + " backend");
    return makers_[slot](c);
  }

  /// Slots with an implementation are below this.
  std::size_t size() const { return makers_.size(); }
  bool has(std::size_t slot) const { return slot < makers_.size() && makers_[slot]; }

private:
  std::vector<factory> makers_;
};

/// Registers `Impl` (constructed from a `Context`) as the store `Writes` on that backend.
template <class Writes, class Impl, class Context>
bool implement_store() {
  store_registry<Context>::of().add(kind_of<Writes>(), [](const Context& c) -> std::unique_ptr<typed_store> {
    return std::make_unique<Impl>(c);
  });
  return true;
}

}  // namespace cl::storage
