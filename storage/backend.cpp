#include "storage/backend.hpp"

#include "domain/search_session.hpp"

#include <filesystem>

namespace cl::storage {

std::unique_ptr<migration_state> backend::open_migration_state() {
  return migration_state_file((std::filesystem::path{settings_.data_dir} / "migrate.state").string());
}

std::optional<std::string> backend::recorded_secrets_fingerprint(const std::string&, bool) { return std::nullopt; }

std::shared_ptr<domain::session_store> backend::open_session_store(const domain::session_limits& limits, std::size_t) {
  return std::make_shared<domain::memory_session_store>(limits);
}

std::shared_ptr<lease_store> backend::open_leases() { return memory_lease_store(); }

std::shared_ptr<held_slot_store> backend::open_held_slots(const std::string&) { return nullptr; }

std::shared_ptr<rate_exchange> backend::open_rate_exchange(const std::string&) { return nullptr; }

std::vector<backend_gauge> backend::status(const record_store&) const { return {}; }

backup_summary backend::backup(const std::string&, const std::vector<std::string>&) {
  throw backup_refused("storage.backend=" + name_ + " keeps no records contentlake backup copies");
}

restore_summary backend::restore(const std::string&) {
  throw backup_refused("storage.backend=" + name_ + " keeps no records contentlake restore brings back");
}

std::string backend::described() const { return settings_.data_dir; }

}  // namespace cl::storage
