#pragma once
// The record store the storage and actor tests run against: LMDB in a data dir, or the in-memory
// backend when CL_TEST_STORE=memory (ctest runs those suites once per backend). Tests that need a
// data dir on disk (reopening, format migrations) are tagged [lmdb] and open LMDB themselves; the
// memory run leaves them out.

#include "storage/kv.hpp"
#include "storage/lmdb_store.hpp"
#include "storage/memory_store.hpp"

#include <cstdlib>
#include <memory>
#include <string>

namespace cl::testing {

/// True in the run against the in-memory backend.
inline bool memory_backend() {
  const char* b = std::getenv("CL_TEST_STORE");
  return b && std::string{b} == "memory";
}

/// A fresh record store of the backend under test (`dir` is used by LMDB only).
inline std::shared_ptr<storage::record_store> open_store(const std::string& dir) {
  return memory_backend() ? storage::open_memory_store() : storage::open_lmdb_store(dir, 64);
}

/// A raw table, by its on-disk name: how tests look at the key layouts under the typed stores.
inline storage::kv::table raw(const char* name) {
  return storage::kv::declare_table(name);
}

}  // namespace cl::testing
