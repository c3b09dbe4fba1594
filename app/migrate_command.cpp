#include "app/migrate_command.hpp"

#include "app/data_dir_lock.hpp"
#include "storage/backend.hpp"
#include "storage/migrate.hpp"

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>

#include <unistd.h>

namespace cl::app {

int migrate(const config::settings& base, const migrate_options& o) {
  try {
    auto source = storage::open_backend(storage::located(base, o.from));
    auto target = storage::open_backend(storage::located(base, o.to));
    if (source->name() == target->name() && o.from == o.to) {
      std::cerr << "contentlake migrate: --from and --to are the same store\n";
      return 2;
    }
    if (auto why = target->unusable_target(); !why.empty()) {
      std::cerr << "contentlake migrate: " << why << "\n";
      return 2;
    }
    // The source is only read: an LMDB data dir is opened read-only without its lock file (nothing
    // in it changes, lock.mdb included), while its data-dir lock (if it has one) keeps a service off.
    std::optional<data_dir_lock> source_held, target_held;
    if (source->traits().in_data_dir && std::filesystem::exists(o.from)) source_held.emplace(o.from, false);
    auto from = source->open_records_to_read();
    if (target->traits().in_data_dir) target_held.emplace(o.to);
    auto to = target->open_records();
    auto state = o.state.empty() ? target->open_migration_state() : storage::migration_state_file(o.state);
    auto progress = o.resume ? state->load() : storage::migration_progress{};
    if (!o.resume && storage::holds_records(*to)) {
      std::cerr << "contentlake migrate: " << target->described()
                << " already holds records: migrate into an empty store, or add --resume to go on with an "
                << "interrupted migration (its progress is in " << state->where() << ")\n";
      return 2;
    }
    std::cerr << "migrating " << source->described() << " -> " << target->described() << " (progress in " << state->where()
              << ")\n";
    std::string current;
    storage::migrate_records(
      *from, *to, progress, [&](const storage::migration_progress& p) { state->save(p); },
      [&, tty = ::isatty(STDERR_FILENO) != 0](const std::string& kind, std::uint64_t copied) {
        // On a terminal a line per kind that counts up; else (a log) a line per page.
        if (tty && kind != current && !current.empty()) std::cerr << "\n";
        current = kind;
        std::cerr << (tty ? "\r  " : "  ") << kind << ": " << copied << " copied" << (tty ? "" : "\n") << std::flush;
      });
    std::cerr << "\nverifying...\n";
    to.reset();  // read what was committed, through a store opened afresh
    to = target->open_records();
    auto check = storage::verify_migration(*from, *to);
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
