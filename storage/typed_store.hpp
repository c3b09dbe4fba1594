#pragma once
/// What every typed store has in common, so that a view can hold a store it does not name: a route
/// group adds a store (its reads, its writes and an implementation per backend) in its own files,
/// and `read_view::store<its_reads>()` finds it.
///
/// A store is two classes: `X_reads` (derived from `typed_store`, with `using writes = X_writes;`)
/// and `X_writes : X_reads`. Its place in every view (`kind_of<X_writes>()`) is given the first
/// time anything asks for it, whatever the backend: each backend keeps its own table of
/// implementations by kind (storage/kv/kv.hpp `kv::implement`, storage/postgresql/backend.hpp
/// `pg::implement`), filled by the files that implement the store for it.

#include <cstddef>

namespace cl::storage {

/// Base of every typed store.
class typed_store {
public:
  virtual ~typed_store() = default;
};

/// A store type's place in every view.
struct store_kind {
  std::size_t slot = 0;
};

/// The next free place (storage/record_store.cpp); use `kind_of`.
store_kind next_store_kind();

/// Places given so far: every store a linked backend implements has one below this.
std::size_t store_kinds_count();

/// The place of the store whose writes class is `Writes`, the same for every backend.
template <class Writes>
store_kind kind_of() {
  static const store_kind kind = next_store_kind();
  return kind;
}

}  // namespace cl::storage
