#pragma once
/// What every typed store has in common, so that a view can hold a store it does not name: a route
/// group adds a store (its reads, its writes and their key-value implementation) in its own files,
/// and `read_view::store<its_reads>()` finds it.
///
/// A store is two classes: `X_reads` (derived from `typed_store`, with `using writes = X_writes;`)
/// and `X_writes : X_reads` (with `static const store_kind kind;`). The file that implements the
/// store defines `kind` by registering its implementation (storage/kv.hpp: `kv::register_store`),
/// so any use of the store links that file in.

#include <cstddef>

namespace cl::storage {

/// Base of every typed store.
class typed_store {
public:
  virtual ~typed_store() = default;
};

/// A store type's place in every view, given when its implementation registers.
struct store_kind {
  std::size_t slot = 0;
};

}  // namespace cl::storage
