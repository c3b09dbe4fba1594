#pragma once
/// The record store `serve` and the maintenance commands open: the backend the configuration
/// names (`storage.backend`), LMDB in the data dir by default.

#include "config/settings.hpp"
#include "storage/record_store.hpp"

#include <memory>

namespace cl::app {

/// Opens the configured backend. Throws std::runtime_error saying what is wrong (a data dir or a
/// schema newer than this build, a database that cannot be reached, an unreadable password file);
/// the message never holds the connection string.
std::shared_ptr<storage::record_store> open_record_store(const config::settings& s);

}  // namespace cl::app
