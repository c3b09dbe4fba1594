#include "storage/migrate.hpp"

#include "domain/base64url.hpp"
#include "storage/every_record.hpp"
#include "storage/copyable.hpp"
#include "storage/stores.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace cl::storage {

namespace {

const std::string done = "done";

/// Applies a page's writes in one transaction of the target.
void apply_page(record_store& to, const std::vector<std::function<void(write_txn&)>>& writes) {
  if (writes.empty()) return;
  auto kept = to.apply({[&](write_txn& tx) {
    for (const auto& w : writes) w(tx);
    return true;
  }});
  if (kept.empty() || !kept[0]) throw std::runtime_error("the target refused a page of the migration");
}

// The change log and the consumers' positions are the record store's own (not a typed store's):
// copied after every kind of record, the log with its own numbers.
constexpr std::size_t log_page = 500;

copied_page copy_changes(const record_store& from, record_store& to, const std::string& after) {
  copied_page page;
  std::uint64_t start = after.empty() ? 0 : std::stoull(after);
  auto have = to.last_change();
  auto entries = from.read_from(start, log_page);
  for (const auto& e : entries)
    if (e.seq > have) page.writes.push_back([e](write_txn& tx) { every_record(tx).import_change(e); });
  page.copied = entries.size();
  page.last = entries.size() < log_page;
  if (!entries.empty()) page.next = std::to_string(entries.back().seq);
  return page;
}

copied_page copy_consumers(const record_store& from) {
  copied_page page;
  auto cs = from.consumers();
  for (const auto& c : cs)
    page.writes.push_back([name = c.name, applied = c.applied](write_txn& tx) { tx.acknowledge_changes(name, applied); });
  page.copied = cs.size();
  page.last = true;
  return page;
}

/// Walks both sides' `kind` in key order: counts, and what differs (at most 50 lines in all).
void compare_kind(const record_kind& kind, const record_store& a, const record_store& b, migration_check& check) {
  auto note = [&](const std::string& what) {
    if (check.differences.size() < 50) check.differences.push_back(kind.name + ": " + what);
  };
  std::uint64_t on_a = 0, on_b = 0;
  std::string after_a, after_b;
  bool more_a = true, more_b = true;
  while (more_a || more_b) {
    std::vector<std::string> page_a, page_b;
    if (more_a) page_a = kind.keys(a, after_a);
    if (more_b) page_b = kind.keys(b, after_b);
    on_a += page_a.size();
    on_b += page_b.size();
    if (kind.record) {
      for (const auto& k : page_a)
        if (kind.record(a, k) != kind.record(b, k)) note(k + " differs or is missing");
    } else if (page_a != page_b) {
      note("the keys after " + after_a + " differ");
    }
    more_a = page_a.size() == copy_page_size;
    more_b = page_b.size() == copy_page_size;
    if (more_a) after_a = page_a.back();
    if (more_b) after_b = page_b.back();
  }
  check.counts[kind.name] = {on_a, on_b};
  if (on_a != on_b) note(std::to_string(on_a) + " in the source, " + std::to_string(on_b) + " in the target");
}

void compare_log(const record_store& a, const record_store& b, migration_check& check) {
  auto note = [&](const std::string& what) {
    if (check.differences.size() < 50) check.differences.push_back(what);
  };
  std::uint64_t on_a = 0, on_b = 0, at = 0;
  for (;;) {
    auto x = a.read_from(at, 1000), y = b.read_from(at, 1000);
    on_a += x.size();
    on_b += y.size();
    if (x != y) note("changes: entries after " + std::to_string(at) + " differ");
    if (x.size() < 1000 || y.size() < 1000) break;
    at = x.back().seq;
  }
  check.counts["changes"] = {on_a, on_b};
  if (on_a != on_b) note("changes: " + std::to_string(on_a) + " in the source, " + std::to_string(on_b) + " in the target");
  auto x = a.consumers(), y = b.consumers();
  check.counts["consumers"] = {x.size(), y.size()};
  auto positions = [](const std::vector<change_consumer>& cs) {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (const auto& c : cs) out.emplace_back(c.name, c.applied);
    return out;
  };
  if (positions(x) != positions(y)) note("consumers: positions differ");
}

}  // namespace

bool holds_records(const record_store& store) {
  if (store.last_change() > 0) return true;
  for (const auto& kind : record_kinds_of(store))
    if (!kind.keys(store, {}).empty()) return true;
  return false;
}

void migrate_records(const record_store& from, record_store& to, migration_progress& progress,
                     const std::function<void(const migration_progress&)>& save, const migration_report& report) {
  // The target counts the same history: the positions and cursors the source's deployment handed
  // out go on opening there (domain/change_cursor.hpp).
  if (auto id = from.deployment_id(); !id.empty()) to.adopt_deployment_id(id);
  auto run = [&](const std::string& name, const std::function<copied_page(const std::string&)>& copy) {
    std::uint64_t copied = 0;
    while (progress[name] != done) {
      auto page = copy(progress[name]);
      apply_page(to, page.writes);
      copied += page.copied;
      progress[name] = page.last ? done : page.next;
      save(progress);
      report(name, copied);
    }
  };
  // Every store's kinds, in their stages' order, then the log.
  for (const auto& kind : record_kinds_of(from))
    run(kind.name, [&](const std::string& after) { return kind.copy(from, after); });
  run("changes", [&](const std::string& after) { return copy_changes(from, to, after); });
  run("consumers", [&](const std::string&) { return copy_consumers(from); });
}

migration_check verify_migration(const record_store& from, const record_store& to) {
  migration_check check;
  for (const auto& kind : record_kinds_of(from)) compare_kind(kind, from, to, check);
  compare_log(from, to, check);
  if (!from.deployment_id().empty() && from.deployment_id() != to.deployment_id())
    check.differences.push_back("the deployment's identity differs (positions and cursors would not open)");
  return check;
}

namespace {

class file_state final : public migration_state {
public:
  explicit file_state(std::string path) : path_(std::move(path)) {}

  migration_progress load() override {
    migration_progress p;
    std::ifstream in{path_};
    std::string kind, position;
    while (in >> kind) {
      std::getline(in, position);
      if (!position.empty() && position.front() == ' ') position.erase(0, 1);
      auto raw = domain::hex_decode(position);
      if (!raw) throw std::runtime_error("the progress file " + path_ + " is damaged (kind " + kind + ")");
      p[kind] = std::move(*raw);
    }
    return p;
  }

  void save(const migration_progress& p) override {
    auto temporary = path_ + ".new";
    {
      std::ofstream out{temporary, std::ios::trunc};
      for (const auto& [kind, position] : p) out << kind << ' ' << domain::hex_encode(position) << '\n';
      out.flush();
      if (!out) throw std::runtime_error("cannot write the progress file " + temporary);
    }
    std::filesystem::rename(temporary, path_);
  }

  std::string where() const override { return path_; }

private:
  std::string path_;
};

}  // namespace

std::unique_ptr<migration_state> migration_state_file(std::string path) {
  return std::make_unique<file_state>(std::move(path));
}

}  // namespace cl::storage
