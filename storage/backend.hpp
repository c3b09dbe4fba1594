#pragma once
/// A storage backend: one component, found by the name `storage.backend` gives, that opens
/// everything kept where the records live (the record store, leases, the shared rate tally, held
/// slots, search sessions, the secrets fact, migration progress, backup) and says what it can do.
///
/// The app asks a backend for its traits and its status, never for its name: a backend is a folder
/// of its own (storage/kv/, storage/postgresql/) plus one line in the registration list
/// (storage/backends.cpp), and owns its configuration section (`storage.<name>.*`, kept in
/// `settings::groups` like a route group's). Nothing above storage/ includes a backend's folder.

#include "config/settings.hpp"
#include "storage/held_slots.hpp"
#include "storage/leases.hpp"
#include "storage/migrate.hpp"
#include "storage/rate_shares.hpp"
#include "storage/record_store.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cl::domain {
class session_store;
struct session_limits;
}  // namespace cl::domain

namespace cl::storage {

/// What a backend can do: the app sizes and schedules by these.
struct backend_traits {
  /// Several nodes may open the same records at once: leases, the rate tally, held slots and
  /// search sessions live in it too, and other nodes' writes reach this one through the change log.
  bool shared = false;
  /// A read may wait on the network (a round trip to a server): its readers and the search
  /// session's store run on threads of their own, off the scheduler's.
  bool reads_block = false;
  /// The records sit in the data dir: a command that opens them holds the data dir's lock.
  bool in_data_dir = true;
  /// The store refuses a second ledger entry under one key by itself (a uniqueness constraint
  /// checked in the same round trip): the ledger inserts without looking first.
  bool trusts_inserts = false;
  /// The record-store format this build writes (`contentlake --version`, `record_format`).
  int format = 0;
};

/// A gauge a backend keeps (its pool, its caches): declared once with its help text, valued at
/// each scrape.
struct backend_gauge {
  std::string name, help;
  double value = 0;
  std::map<std::string, std::string> labels;  ///< the series' labels (none: the family's only one)
  bool total = false;  ///< a counter: `value` is its running total (help: the family's first series')
};

/// A backup of the data dir (`contentlake backup`), and a restore of one.
struct backup_summary {
  std::uint64_t last_change = 0;  ///< the change-log sequence of the copied commit
  std::uint64_t record_bytes = 0;
  std::uint64_t objects = 0, object_bytes = 0;
  std::vector<std::string> identity_files;
};
struct restore_summary {
  std::uint64_t last_change = 0;
  std::uint64_t objects = 0;
  std::uint64_t documents = 0;  ///< Resources in the rebuilt search index
  std::string epoch;            ///< the change log's new epoch
  std::vector<std::string> configuration;  ///< the files the backup named, to put back by hand
};

/// `backup` or `restore` on a backend whose records are not copied that way; what() says how.
struct backup_refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class backend {
public:
  backend(std::string name, const backend_traits& traits, const config::settings& settings)
    : name_(std::move(name)), traits_(traits), settings_(settings) {}
  virtual ~backend() = default;
  backend(const backend&) = delete;
  backend& operator=(const backend&) = delete;

  const std::string& name() const { return name_; }
  const backend_traits& traits() const { return traits_; }
  const config::settings& settings() const { return settings_; }

  /// Opens (creating, migrating) the record store. Throws std::runtime_error saying what is wrong
  /// (a newer format, a database that cannot be reached, an unreadable password file); the message
  /// never holds a secret.
  virtual std::shared_ptr<record_store> open_records() = 0;
  /// The records for reading only (`contentlake migrate`'s source): nothing in them is changed
  /// or created.
  virtual std::shared_ptr<record_store> open_records_to_read() = 0;
  /// Transactions committing at once: the writer's lanes. One: one writer.
  virtual std::size_t writer_lanes() const { return 1; }

  /// Where `contentlake migrate` into this backend keeps its progress. Call after `open_records`.
  virtual std::unique_ptr<migration_state> open_migration_state();
  /// On a shared backend, the fingerprint of the secrets every node shares: `mine` when this node
  /// is the first to record one (or the first with a secrets file, `from_file`), else the one
  /// recorded; none on a backend one node holds. Call after `open_records`.
  virtual std::optional<std::string> recorded_secrets_fingerprint(const std::string& mine, bool from_file);
  /// Where search sessions live (this process's memory when one node holds the records);
  /// `connections` of their own on a backend with a server.
  virtual std::shared_ptr<domain::session_store> open_session_store(const domain::session_limits& limits,
                                                               std::size_t connections);
  /// Where leases of work done once among the nodes are kept (memory on one node).
  virtual std::shared_ptr<lease_store> open_leases();
  /// The held requests of every node, this node's under `node`; none on one node.
  virtual std::shared_ptr<held_slot_store> open_held_slots(const std::string& node);
  /// The tally the nodes' rate limiters share, this node's under `node`; none on one node.
  virtual std::shared_ptr<rate_exchange> open_rate_exchange(const std::string& node);
  /// The backend's gauges now (names stay the same from one call to the next) over `records`, the
  /// store `open_records` answered.
  virtual std::vector<backend_gauge> status(const record_store& records) const;

  /// `contentlake backup --to`: copies the records (and the data dir's objects and identity) while
  /// a service runs. Throws `backup_refused` where the records are copied by other tools.
  virtual backup_summary backup(const std::string& to, const std::vector<std::string>& configuration);
  /// `contentlake restore --from` into the data dir, which holds no records yet.
  virtual restore_summary restore(const std::string& from);
  /// For a migration target: why the location cannot hold a new store (a file, a folder holding
  /// something else), empty when it can.
  virtual std::string unusable_target() const { return {}; }
  /// The location for messages: never a secret (a connection string may hold a password).
  virtual std::string described() const;

private:
  std::string name_;
  backend_traits traits_;
  config::settings settings_;
};

/// A registered backend: its name (the value of `storage.backend`), what it can do, its options
/// (`storage.<name>.*`), how it is made, and which of `contentlake migrate`'s locations it names.
struct backend_entry {
  std::string name;
  std::string summary;  ///< for `storage.backend`'s description
  backend_traits traits;
  std::vector<config::option> options;
  std::unique_ptr<backend> (*make)(const backend_entry& self, const config::settings&) = nullptr;
  /// True when `where` (`migrate --from/--to`) names a store of this backend; the first backend
  /// (the default) takes what no other claims, as a data dir.
  bool (*claims)(const std::string& where) = nullptr;
  /// `base` pointed at the store `where` names.
  config::settings (*at)(config::settings base, const std::string& where) = nullptr;
};

/// `backend_entry::make` for a backend class `Impl` constructed as `backend` is.
template <class Impl>
std::unique_ptr<backend> make_backend(const backend_entry& self, const config::settings& s) {
  return std::make_unique<Impl>(self.name, self.traits, s);
}

/// Every backend, in the registration list's order; the first is the default.
const std::vector<backend_entry>& backends();

/// The backend `s.storage.backend` names, made from `s` (nothing opened yet). Throws
/// std::runtime_error naming the known backends when none has that name, or when its section is
/// not acceptable.
std::unique_ptr<backend> open_backend(const config::settings& s);

/// `storage.backend` and every backend's section, for the configuration.
std::vector<config::option> backend_options();

/// Settings naming the store `where` (`contentlake migrate`): the backend that claims it, else the
/// default backend's data dir.
config::settings located(const config::settings& base, const std::string& where);

}  // namespace cl::storage
