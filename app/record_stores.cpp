#include "app/record_stores.hpp"

#include "storage/kv/lmdb_store.hpp"
#include "storage/postgresql/leases.hpp"
#include "storage/postgresql/postgresql_store.hpp"
#include "storage/postgresql/search_sessions.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cl::app {

namespace {

std::string read_password(const std::string& file) {
  std::ifstream in{file};
  if (!in) throw std::runtime_error("cannot read storage.postgresql.password_file " + file);
  std::string password;
  std::getline(in, password);
  while (!password.empty() && (password.back() == '\r' || password.back() == ' ')) password.pop_back();
  return password;
}

storage::postgresql_settings postgresql_of(const config::settings& s) {
  if (s.storage.postgresql_url.empty())
    throw std::runtime_error("storage.backend is postgresql but storage.postgresql.url is not set");
  storage::postgresql_settings pg;
  pg.url = s.storage.postgresql_url;
  if (!s.storage.postgresql_password_file.empty()) pg.password = read_password(s.storage.postgresql_password_file);
  pg.pool_size = s.storage.postgresql_pool_size;
  pg.cache_bytes = s.storage.postgresql_cache_mib << 20;
  pg.wait = std::chrono::milliseconds{s.actors.ask_timeout_ms};
  pg.answer_wait = std::chrono::milliseconds{s.storage.postgresql_answer_wait_ms};
  pg.follow_interval = std::chrono::milliseconds{s.storage.postgresql_follow_interval_ms};
  pg.max_lag = std::chrono::milliseconds{s.storage.postgresql_max_lag_ms};
  return pg;
}

}  // namespace

std::optional<std::string> recorded_secrets_fingerprint(const config::settings& s, const std::string& mine) {
  if (s.storage.backend != "postgresql") return std::nullopt;
  return storage::record_secrets_fingerprint(postgresql_of(s), mine, !s.secrets_file.empty());
}

std::shared_ptr<domain::session_store> open_session_store(const config::settings& s, const domain::session_limits& limits,
                                                          std::size_t connections) {
  if (s.storage.backend == "postgresql") return storage::open_postgresql_sessions(postgresql_of(s), limits, connections);
  return std::make_shared<domain::memory_session_store>(limits);
}

std::shared_ptr<storage::lease_store> open_lease_store(const config::settings& s) {
  if (s.storage.backend == "postgresql") return storage::open_postgresql_leases(postgresql_of(s));
  return storage::memory_lease_store();
}

std::shared_ptr<storage::held_slot_store> open_held_slots(const config::settings& s, const std::string& node) {
  if (s.storage.backend == "postgresql") return storage::open_postgresql_held_slots(postgresql_of(s), node);
  return nullptr;
}

std::shared_ptr<storage::rate_exchange> open_rate_exchange(const config::settings& s, const std::string& node) {
  if (s.storage.backend == "postgresql") return storage::open_postgresql_rate_exchange(postgresql_of(s), node);
  return nullptr;
}

std::unique_ptr<storage::migration_state> open_migration_state(const config::settings& s) {
  if (s.storage.backend == "postgresql") return storage::postgresql_migration_state(postgresql_of(s));
  return storage::migration_state_file((std::filesystem::path{s.data_dir} / "migrate.state").string());
}

std::shared_ptr<storage::record_store> open_record_store_to_read(const config::settings& s) {
  if (s.storage.backend == "postgresql") return open_record_store(s);
  return storage::open_lmdb_store_read_only(s.data_dir);
}

std::shared_ptr<storage::record_store> open_record_store(const config::settings& s) {
  if (s.storage.backend == "postgresql") return storage::open_postgresql_store(postgresql_of(s));
  std::filesystem::create_directories(s.data_dir);
  return storage::open_lmdb_store(s.data_dir, s.storage.map_size_mib);
}

}  // namespace cl::app
