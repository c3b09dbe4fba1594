#pragma once
/// The cluster's leases and the rate limiters' shared tally on PostgreSQL (every node on the
/// database shares them). Each opens a connection of its own.

#include "storage/held_slots.hpp"
#include "storage/leases.hpp"
#include "storage/postgresql/postgresql_store.hpp"
#include "storage/rate_shares.hpp"

#include <memory>
#include <string>

namespace cl::storage {

/// The leases, as rows of the database (the schema must be migrated: a record store opened).
std::shared_ptr<lease_store> open_postgresql_leases(const postgresql_settings& settings);

/// The shared tally of admissions, this node's kept under `node`.
std::shared_ptr<rate_exchange> open_postgresql_rate_exchange(const postgresql_settings& settings, std::string node);

/// The held requests of every node (`held_slot_store`), this node's kept under `node`; a connection
/// pool of two and a thread of its own that gives slots back and keeps this node's alive.
std::shared_ptr<held_slot_store> open_postgresql_held_slots(const postgresql_settings& settings, std::string node);

}  // namespace cl::storage
