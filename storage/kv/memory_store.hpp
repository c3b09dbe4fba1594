#pragma once
/// The in-memory backend of the record store: the same typed stores, write path and change log as
/// LMDB's, on ordered maps, gone when the process ends. The storage and actor tests run against
/// both backends; it proves that nothing above storage/ depends on LMDB.

#include "storage/record_store.hpp"

#include <memory>

namespace cl::storage {

/// An empty record store held in memory.
std::shared_ptr<record_store> open_memory_store();

}  // namespace cl::storage
