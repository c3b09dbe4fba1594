#pragma once
/// Search sessions on PostgreSQL (`storage.backend = postgresql`): every node on the database shares
/// them, so a search session opened on one node continues on any other (spec 4.5.3). Schema part
/// "search" (storage/postgresql/search_sessions.cpp).

#include "domain/search_session.hpp"
#include "storage/postgresql/postgresql_store.hpp"

#include <cstddef>
#include <memory>

namespace cl::storage {

/// The shared session store, over `connections` connections of its own. The schema must be migrated
/// (a record store opened on `settings`). Its calls throw when the database cannot be reached.
std::shared_ptr<domain::session_store> open_postgresql_sessions(const postgresql_settings& settings,
                                                                const domain::session_limits& limits,
                                                                std::size_t connections);

}  // namespace cl::storage
