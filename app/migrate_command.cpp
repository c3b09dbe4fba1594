#include "app/migrate_command.hpp"

#include "app/record_stores.hpp"
#include "storage/migrate.hpp"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

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

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string unhex(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) out.push_back(static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16)));
  return out;
}

storage::migration_progress load(const std::string& file) {
  storage::migration_progress p;
  std::ifstream in{file};
  std::string kind, position;
  while (in >> kind) {
    std::getline(in, position);
    if (!position.empty() && position.front() == ' ') position.erase(0, 1);
    p[kind] = unhex(position);
  }
  return p;
}

void save(const std::string& file, const storage::migration_progress& p) {
  auto temporary = file + ".new";
  {
    std::ofstream out{temporary, std::ios::trunc};
    for (const auto& [kind, position] : p) out << kind << ' ' << hex(position) << '\n';
    out.flush();
    if (!out) throw std::runtime_error("cannot write the progress file " + temporary);
  }
  std::filesystem::rename(temporary, file);
}

}  // namespace

int migrate(const config::settings& base, const migrate_options& o) {
  try {
    if (is_postgresql(o.from) == is_postgresql(o.to) && o.from == o.to)
      throw std::runtime_error("--from and --to are the same store");
    if (!is_postgresql(o.from) && !std::filesystem::exists(std::filesystem::path{o.from} / "lmdb"))
      throw std::runtime_error(o.from + " holds no record store (no lmdb/ in it)");
    auto state = o.state;
    if (state.empty()) state = (std::filesystem::path{is_postgresql(o.from) ? o.to : o.from} / "migrate.state").string();
    auto source = open_record_store(at(base, o.from));
    auto target = open_record_store(at(base, o.to));
    auto progress = o.resume ? load(state) : storage::migration_progress{};
    if (!o.resume && storage::holds_records(*target)) {
      std::cerr << "contentlake migrate: " << described(o.to)
                << " already holds records: migrate into an empty store, or add --resume to go on with an "
                << "interrupted migration (" << state << ")\n";
      return 2;
    }
    std::cerr << "migrating " << described(o.from) << " -> " << described(o.to) << " (progress in " << state << ")\n";
    std::string current;
    storage::migrate_records(
      *source, *target, progress, [&](const storage::migration_progress& p) { save(state, p); },
      [&, tty = ::isatty(STDERR_FILENO) != 0](const std::string& kind, std::uint64_t copied) {
        // On a terminal a line per kind that counts up; else (a log) a line per page.
        if (tty && kind != current && !current.empty()) std::cerr << "\n";
        current = kind;
        std::cerr << (tty ? "\r  " : "  ") << kind << ": " << copied << " copied" << (tty ? "" : "\n") << std::flush;
      });
    std::cerr << "\nverifying...\n";
    target.reset();  // read what was committed, through a store opened afresh
    target = open_record_store(at(base, o.to));
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
