#include "app/migrate_command.hpp"

#include "app/data_dir_lock.hpp"
#include "app/record_stores.hpp"
#include "storage/migrate.hpp"

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>

#include <unistd.h>

namespace cl::app {

namespace {

bool is_postgresql(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0
         || where.find("dbname=") != std::string::npos || where.find("host=") != std::string::npos;
}

/// `base` pointed at `where`.
config::settings at(config::settings base, const std::string& where) {
  if (is_postgresql(where)) {
    base.storage.backend = "postgresql";
    base.storage.postgresql_url = where;
  } else {
    base.storage.backend = "lmdb";
    base.data_dir = where;
  }
  return base;
}

/// What a side is, for messages: never a connection string (it may hold a password).
std::string described(const std::string& where) { return is_postgresql(where) ? "the PostgreSQL database" : where; }

/// Why `where` cannot be a migration's target directory: it is a file, or a directory that holds
/// something but is no data dir (`--to /etc`). Empty when it can: absent, empty, or a data dir (it
/// holds `lmdb/`, or `identity/` copied there first to keep the source's keys).
std::string unusable_target(const std::string& where) {
  namespace fs = std::filesystem;
  fs::path dir{where};
  std::error_code ec;
  if (!fs::exists(dir, ec)) return {};
  if (!fs::is_directory(dir, ec)) return where + " is not a directory";
  if (fs::is_empty(dir, ec) || fs::exists(dir / "lmdb", ec) || fs::exists(dir / "identity", ec)) return {};
  return where + " is neither empty nor a data dir (it holds no lmdb/ or identity/): name a new or empty directory";
}

}  // namespace

int migrate(const config::settings& base, const migrate_options& o) {
  try {
    bool from_pg = is_postgresql(o.from), to_pg = is_postgresql(o.to);
    if (from_pg == to_pg && o.from == o.to) {
      std::cerr << "contentlake migrate: --from and --to are the same store\n";
      return 2;
    }
    if (!to_pg) {
      if (auto why = unusable_target(o.to); !why.empty()) {
        std::cerr << "contentlake migrate: " << why << "\n";
        return 2;
      }
    }
    // The source is only read: an LMDB data dir is opened read-only without its lock file (nothing
    // in it changes, lock.mdb included), while its data-dir lock (if it has one) keeps a service off.
    std::optional<data_dir_lock> source_held, target_held;
    if (!from_pg) {
      if (!std::filesystem::exists(std::filesystem::path{o.from} / "lmdb"))
        throw std::runtime_error(o.from + " holds no record store (no lmdb/ in it)");
      source_held.emplace(o.from, false);
    }
    auto source = open_record_store_to_read(at(base, o.from));
    if (!to_pg) target_held.emplace(o.to);
    auto target_settings = at(base, o.to);
    auto target = open_record_store(target_settings);
    auto state = o.state.empty() ? open_migration_state(target_settings) : storage::migration_state_file(o.state);
    auto progress = o.resume ? state->load() : storage::migration_progress{};
    if (!o.resume && storage::holds_records(*target)) {
      std::cerr << "contentlake migrate: " << described(o.to)
                << " already holds records: migrate into an empty store, or add --resume to go on with an "
                << "interrupted migration (its progress is in " << state->where() << ")\n";
      return 2;
    }
    std::cerr << "migrating " << described(o.from) << " -> " << described(o.to) << " (progress in " << state->where()
              << ")\n";
    std::string current;
    storage::migrate_records(
      *source, *target, progress, [&](const storage::migration_progress& p) { state->save(p); },
      [&, tty = ::isatty(STDERR_FILENO) != 0](const std::string& kind, std::uint64_t copied) {
        // On a terminal a line per kind that counts up; else (a log) a line per page.
        if (tty && kind != current && !current.empty()) std::cerr << "\n";
        current = kind;
        std::cerr << (tty ? "\r  " : "  ") << kind << ": " << copied << " copied" << (tty ? "" : "\n") << std::flush;
      });
    std::cerr << "\nverifying...\n";
    target.reset();  // read what was committed, through a store opened afresh
    target = open_record_store(target_settings);
    auto check = storage::verify_migration(*source, *target);
    std::cout << std::left << std::setw(18) << "kind" << std::right << std::setw(12) << "source" << std::setw(12)
              << "target" << "\n";
    for (const auto& [kind, counts] : check.counts)
      std::cout << std::left << std::setw(18) << kind << std::right << std::setw(12) << counts.first << std::setw(12)
                << counts.second << "\n";
    if (!check.differences.empty()) {
      std::cout << "DIFFERENCES:\n";
      for (const auto& d : check.differences) std::cout << "  " << d << "\n";
      return 1;
    }
    std::cout << "every record copied and verified; every Resource's record (and hash) identical\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "\ncontentlake migrate: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cl::app
