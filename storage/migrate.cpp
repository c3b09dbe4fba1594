#include "storage/migrate.hpp"

#include "domain/access.hpp"
#include "domain/base64url.hpp"
#include "domain/contract.hpp"
#include "storage/every_record.hpp"
#include "storage/stores.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace cl::storage {

namespace {

constexpr std::size_t page_size = 200;
constexpr char sep = '\x1f';  ///< between the parts of a position (no id holds it)
const std::string done = "done";

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto cut = s.find(sep, start);
    out.push_back(s.substr(start, cut == std::string::npos ? std::string::npos : cut - start));
    if (cut == std::string::npos) return out;
    start = cut + 1;
  }
}

std::string join(std::initializer_list<std::string> parts) {
  std::string out;
  bool first = true;
  for (const auto& p : parts) {
    if (!first) out.push_back(sep);
    out += p;
    first = false;
  }
  return out;
}

resource_position position_of(const std::string& s) {
  if (s.empty()) return {};
  auto p = split(s);
  return {p.at(0), p.size() > 1 ? p[1] : std::string{}};
}

/// A three-part position (a grant, a ledger key) as its key; empty: from the start.
template <class Key>
Key triple_of(const std::string& s) {
  if (s.empty()) return {};
  auto p = split(s);
  return Key{p.at(0), p.at(1), p.at(2)};
}

using write = std::function<void(write_txn&)>;

/// Applies a page's writes in one transaction of the target.
void apply_page(record_store& to, std::vector<write> writes) {
  if (writes.empty()) return;
  auto kept = to.apply({[&](write_txn& tx) {
    for (const auto& w : writes) w(tx);
    return true;
  }});
  if (kept.empty() || !kept[0]) throw std::runtime_error("the target refused a page of the migration");
}

/// Every version of a Resource, oldest first.
std::vector<std::pair<std::string, std::string>> resource_versions(const read_view& v, const resource_position& r) {
  std::vector<std::pair<std::string, std::string>> out;
  version_query q{r.tenant, r.id, {}, page_size};
  for (;;) {
    auto page = v.resources().versions(q);
    for (auto& e : page.entries) out.push_back(std::move(e));
    if (page.exhausted || page.entries.empty()) return out;
    q.after = page.resume_after;
  }
}

/// Every version of a contract, oldest first: (number, record).
std::vector<std::pair<std::string, std::string>> contract_versions(const read_view& v, const resource_position& c) {
  std::vector<std::pair<std::string, std::string>> out;
  contract_versions_query q{c.tenant, c.id, {}, page_size};
  for (;;) {
    auto page = v.contracts().versions(q);
    for (auto& e : page.entries) out.push_back(std::move(e));
    if (page.exhausted || page.entries.empty()) return out;
    q.after = page.resume_after;
  }
}

/// An endpoint's whole delivery log, oldest first.
std::vector<webhook_delivery> delivery_log(const read_view& v, const webhook_record& w) {
  std::vector<webhook_delivery> out;
  std::uint64_t before = 0;
  for (;;) {
    auto page = webhooks(v).deliveries(w.tenant, w.id, before, page_size);
    if (page.empty()) break;
    before = page.back().number;
    out.insert(out.end(), page.begin(), page.end());
    if (page.size() < page_size) break;
  }
  return {out.rbegin(), out.rend()};
}

struct page {
  std::string next;  ///< the position after the page (`done` at the end)
  std::uint64_t copied = 0;
};

/// Reads one page of `kind` after `after` from `from` and writes it to `to`.
page copy_page(const std::string& kind, const record_store& from, record_store& to, const std::string& after) {
  std::vector<write> writes;
  page out;
  auto finish = [&](std::size_t got, std::string last) {
    apply_page(to, std::move(writes));
    out.copied = got;
    out.next = got < page_size ? done : std::move(last);
    return out;
  };
  const auto& every = every_record(from);
  auto positions_page = [&](std::vector<resource_position> ps, const std::function<void(const resource_position&)>& each) {
    for (const auto& p : ps) each(p);
    return finish(ps.size(), ps.empty() ? std::string{} : join({ps.back().tenant, ps.back().id}));
  };
  if (kind == "works" || kind == "sources" || kind == "agents") {
    auto k = kind == "works" ? catalog_kind::work : kind == "sources" ? catalog_kind::source : catalog_kind::agent;
    return positions_page(every.catalog(k, position_of(after), page_size), [&](const resource_position& p) {
      if (auto record = from.catalog().get(k, p.tenant, p.id))
        writes.push_back([k, p, record = *record](write_txn& tx) { tx.catalog().put(k, p.tenant, p.id, record); });
    });
  }
  if (kind == "contracts") {
    return positions_page(every.contracts(position_of(after), page_size), [&](const resource_position& p) {
      for (auto& [number, record] : contract_versions(from, p)) {
        auto view = domain::contract_view_of(record);
        if (!view) throw std::runtime_error("contract " + p.id + " version " + number + " cannot be read");
        writes.push_back([p, n = std::stoll(number), status = view->status, works = view->work_ids,
                          record = std::move(record)](write_txn& tx) {
          tx.contracts().put_version(p.tenant, p.id, n, status, works, record);
        });
      }
    });
  }
  if (kind == "resources") {
    auto ps = from.resources().every(position_of(after), page_size);
    return positions_page(ps, [&](const resource_position& p) {
      auto record = from.resources().get(p.tenant, p.id);
      auto header = from.resources().header(p.tenant, p.id);
      if (!record || !header) return;  // removed since the page was read
      auto versions = resource_versions(from, p);
      writes.push_back([p, record = *record, header = *header, versions = std::move(versions)](write_txn& tx) {
        tx.resources().put(p.tenant, p.id, header, record);
        for (const auto& [version, snapshot] : versions) tx.resources().put_version(p.tenant, p.id, version, snapshot);
      });
    });
  }
  if (kind == "activities") {
    return positions_page(every.activities(position_of(after), page_size), [&](const resource_position& p) {
      if (auto record = from.activities().get(p.tenant, p.id))
        writes.push_back([p, record = *record](write_txn& tx) {
          tx.activities().put(p.tenant, p.id, activity_header_from_json(record), record);
        });
    });
  }
  if (kind == "grants") {
    auto gs = every.grants(triple_of<grant_ref>(after), page_size);
    for (const auto& g : gs)
      if (auto record = from.grants().grant(g.tenant, g.resource_id, g.principal)) {
        auto parsed = domain::parse_grant(*record);
        if (!parsed) throw std::runtime_error("grant on " + g.resource_id + " cannot be read");
        writes.push_back([tenant = g.tenant, grant = *parsed](write_txn& tx) { tx.grants().put(tenant, grant); });
      }
    return finish(gs.size(), gs.empty() ? std::string{} : join({gs.back().tenant, gs.back().resource_id, gs.back().principal}));
  }
  if (kind == "ledger") {
    auto keys = every.ledger(triple_of<domain::ledger_key>(after), page_size);
    for (const auto& k : keys)
      if (auto record = from.ledger().record(k)) {
        auto parsed = domain::parse_ledger_record(*record);
        writes.push_back([k, created = parsed ? parsed->created_ms : 0, record = *record](write_txn& tx) {
          if (!tx.ledger().record(k)) tx.ledger().put(k, created, record);  // a resumed page: once
        });
      }
    return finish(keys.size(), keys.empty() ? std::string{} : join({keys.back().tenant, keys.back().client_id, keys.back().key}));
  }
  if (kind == "blob_uploads") {
    auto us = every.uploads(position_of(after), page_size);
    for (const auto& u : us) writes.push_back([u](write_txn& tx) { blobs(tx).put_upload(u); });
    return finish(us.size(), us.empty() ? std::string{} : join({us.back().tenant, us.back().id}));
  }
  if (kind == "blob_versions") {
    blob_version from_here;
    if (!after.empty()) {
      auto parts = split(after);
      from_here.tenant = parts.at(0);
      from_here.blob_id = parts.at(1);
      from_here.version = std::stoll(parts.at(2));
    }
    auto vs = every.blob_versions(from_here, page_size);
    for (const auto& v : vs)
      writes.push_back([v](write_txn& tx) {
        if (!blobs(tx).version(v.tenant, v.blob_id, v.version)) blobs(tx).add_version(v);
      });
    return finish(vs.size(), vs.empty() ? std::string{}
                                        : join({vs.back().tenant, vs.back().blob_id, std::to_string(vs.back().version)}));
  }
  if (kind == "webhooks") {
    auto ws = every.webhooks(position_of(after), page_size);
    for (const auto& w : ws) {
      auto log = delivery_log(from, w);
      writes.push_back([w, log = std::move(log)](write_txn& tx) {
        webhooks(tx).put(w);
        for (const auto& d : log) webhooks(tx).log_delivery(d, 0);
      });
    }
    return finish(ws.size(), ws.empty() ? std::string{} : join({ws.back().tenant, ws.back().id}));
  }
  if (kind == "webhook_retries") {
    webhook_retry last;
    if (!after.empty()) {
      auto parts = split(after);
      last.due_ms = std::stoll(parts.at(0));
      last.tenant = parts.at(1);
      last.webhook_id = parts.at(2);
      last.message_id = parts.at(3);
    }
    auto rs = webhooks(from).due(std::numeric_limits<std::int64_t>::max(), page_size, after.empty() ? nullptr : &last);
    for (const auto& r : rs) writes.push_back([r](write_txn& tx) { webhooks(tx).schedule(r); });
    return finish(rs.size(), rs.empty() ? std::string{}
                                        : join({std::to_string(rs.back().due_ms), rs.back().tenant, rs.back().webhook_id,
                                                rs.back().message_id}));
  }
  if (kind == "changes") {
    std::uint64_t start = after.empty() ? 0 : std::stoull(after);
    auto have = to.last_change();
    auto entries = from.read_from(start, 500);
    for (const auto& e : entries)
      if (e.seq > have) writes.push_back([e](write_txn& tx) { every_record(tx).import_change(e); });
    apply_page(to, std::move(writes));
    out.copied = entries.size();
    out.next = entries.size() < 500 ? done : std::to_string(entries.back().seq);
    return out;
  }
  if (kind == "consumers") {
    auto cs = from.consumers();
    for (const auto& c : cs)
      writes.push_back([name = c.name, applied = c.applied](write_txn& tx) { tx.acknowledge_changes(name, applied); });
    apply_page(to, std::move(writes));
    out.copied = cs.size();
    out.next = done;
    return out;
  }
  throw std::logic_error("unknown kind of record: " + kind);
}

/// Walks both sides' `kind` in order: counts, and what differs (at most a few lines per kind).
void compare_kind(const std::string& kind, const record_store& a, const record_store& b, migration_check& check) {
  auto note = [&](const std::string& what) {
    if (check.differences.size() < 50) check.differences.push_back(kind + ": " + what);
  };
  std::uint64_t on_a = 0, on_b = 0;
  // The position walks of the kinds that have one, with the record compared at each.
  auto walk = [&](const std::function<std::vector<std::string>(const record_store&, const std::string&)>& keys,
                  const std::function<std::optional<std::string>(const record_store&, const std::string&)>& record) {
    for (const auto* side : {&a, &b}) {
      std::string after;
      for (;;) {
        auto page = keys(*side, after);
        for (const auto& k : page) {
          (side == &a ? on_a : on_b)++;
          if (side == &a && record(a, k) != record(b, k)) note(k + " differs or is missing");
        }
        if (page.size() < page_size) break;
        after = page.back();
      }
    }
  };
  auto positions = [&](auto list) {
    return [list](const record_store& s, const std::string& after) {
      std::vector<std::string> out;
      for (const auto& p : list(s, position_of(after))) out.push_back(join({p.tenant, p.id}));
      return out;
    };
  };
  if (kind == "works" || kind == "sources" || kind == "agents") {
    auto k = kind == "works" ? catalog_kind::work : kind == "sources" ? catalog_kind::source : catalog_kind::agent;
    walk(positions([k](const record_store& s, const resource_position& p) { return every_record(s).catalog(k, p, page_size); }),
         [k](const record_store& s, const std::string& key) {
           auto p = position_of(key);
           return s.catalog().get(k, p.tenant, p.id);
         });
  } else if (kind == "contracts") {
    walk(positions([](const record_store& s, const resource_position& p) { return every_record(s).contracts(p, page_size); }),
         [](const record_store& s, const std::string& key) -> std::optional<std::string> {
           std::string all;
           for (const auto& [n, record] : contract_versions(s, position_of(key))) all += n + ":" + record + "\n";
           return all;
         });
  } else if (kind == "resources") {
    walk(positions([](const record_store& s, const resource_position& p) { return s.resources().every(p, page_size); }),
         [](const record_store& s, const std::string& key) -> std::optional<std::string> {
           auto p = position_of(key);
           auto record = s.resources().get(p.tenant, p.id);
           if (!record) return std::nullopt;
           for (const auto& [v, snapshot] : resource_versions(s, p)) *record += "\n" + v + ":" + snapshot;
           return record;
         });
  } else if (kind == "activities") {
    walk(positions([](const record_store& s, const resource_position& p) { return every_record(s).activities(p, page_size); }),
         [](const record_store& s, const std::string& key) {
           auto p = position_of(key);
           return s.activities().get(p.tenant, p.id);
         });
  } else if (kind == "grants") {
    walk([](const record_store& s, const std::string& after) {
           std::vector<std::string> out;
           for (const auto& g : every_record(s).grants(triple_of<grant_ref>(after), page_size))
             out.push_back(join({g.tenant, g.resource_id, g.principal}));
           return out;
         },
         [](const record_store& s, const std::string& key) {
           auto g = triple_of<grant_ref>(key);
           return s.grants().grant(g.tenant, g.resource_id, g.principal);
         });
  } else if (kind == "ledger") {
    walk([](const record_store& s, const std::string& after) {
           std::vector<std::string> out;
           for (const auto& k : every_record(s).ledger(triple_of<domain::ledger_key>(after), page_size))
             out.push_back(join({k.tenant, k.client_id, k.key}));
           return out;
         },
         [](const record_store& s, const std::string& key) {
           return s.ledger().record(triple_of<domain::ledger_key>(key));
         });
  } else if (kind == "blob_uploads") {
    walk(positions([](const record_store& s, const resource_position& p) {
           std::vector<resource_position> out;
           for (const auto& u : every_record(s).uploads(p, page_size)) out.push_back({u.tenant, u.id});
           return out;
         }),
         [](const record_store& s, const std::string& key) -> std::optional<std::string> {
           auto p = position_of(key);
           auto u = blobs(s).upload(p.tenant, p.id);
           if (!u) return std::nullopt;
           return u->blob_id + "|" + u->state + "|" + std::to_string(u->expires_at) + "|" + std::to_string(u->version);
         });
  } else if (kind == "blob_versions") {
    walk([](const record_store& s, const std::string& after) {
           blob_version from_here;
           if (!after.empty()) {
             auto parts = split(after);
             from_here = blob_version{parts.at(0), parts.at(1), std::stoll(parts.at(2))};
           }
           std::vector<std::string> out;
           for (const auto& v : every_record(s).blob_versions(from_here, page_size))
             out.push_back(join({v.tenant, v.blob_id, std::to_string(v.version)}));
           return out;
         },
         [](const record_store& s, const std::string& key) -> std::optional<std::string> {
           auto p = split(key);
           auto v = blobs(s).version(p.at(0), p.at(1), std::stoll(p.at(2)));
           if (!v) return std::nullopt;
           return v->sha256 + "|" + std::to_string(v->size) + "|" + v->object_key;
         });
  } else if (kind == "webhooks") {
    walk(positions([](const record_store& s, const resource_position& p) {
           std::vector<resource_position> out;
           for (const auto& w : every_record(s).webhooks(p, page_size)) out.push_back({w.tenant, w.id});
           return out;
         }),
         [](const record_store& s, const std::string& key) -> std::optional<std::string> {
           auto p = position_of(key);
           auto w = webhooks(s).get(p.tenant, p.id);
           if (!w) return std::nullopt;
           return w->url + "|" + w->secret_sealed + "|" + std::to_string(w->cursor) + "|"
                  + std::to_string(delivery_log(s, *w).size());
         });
  } else if (kind == "webhook_retries") {
    for (const auto* side : {&a, &b})
      (side == &a ? on_a : on_b) = webhooks(*side).due(std::numeric_limits<std::int64_t>::max(), 1000000).size();
  } else if (kind == "changes") {
    std::uint64_t at = 0;
    for (;;) {
      auto x = a.read_from(at, 1000), y = b.read_from(at, 1000);
      on_a += x.size();
      on_b += y.size();
      if (x != y) note("entries after " + std::to_string(at) + " differ");
      if (x.size() < 1000 || y.size() < 1000) break;
      at = x.back().seq;
    }
  } else if (kind == "consumers") {
    auto x = a.consumers(), y = b.consumers();
    on_a = x.size();
    on_b = y.size();
    auto positions = [](const std::vector<change_consumer>& cs) {
      std::vector<std::pair<std::string, std::uint64_t>> out;
      for (const auto& c : cs) out.emplace_back(c.name, c.applied);
      return out;
    };
    if (positions(x) != positions(y)) note("positions differ");
  }
  check.counts[kind] = {on_a, on_b};
  if (on_a != on_b) note(std::to_string(on_a) + " in the source, " + std::to_string(on_b) + " in the target");
}

}  // namespace

const std::vector<std::string>& migration_kinds() {
  static const std::vector<std::string> kinds = {
    "works", "sources", "agents", "contracts", "resources", "activities", "grants", "ledger",
    "blob_uploads", "blob_versions", "webhooks", "webhook_retries", "changes", "consumers"};
  return kinds;
}

bool holds_records(const record_store& store) {
  return store.last_change() > 0 || !store.resources().every({}, 1).empty()
         || !every_record(store).catalog(catalog_kind::work, {}, 1).empty()
         || !every_record(store).contracts({}, 1).empty();
}

void migrate_records(const record_store& from, record_store& to, migration_progress& progress,
                     const std::function<void(const migration_progress&)>& save, const migration_report& report) {
  // The target counts the same history: the positions and cursors the source's deployment handed
  // out go on opening there (domain/change_cursor.hpp).
  if (auto id = from.deployment_id(); !id.empty()) to.adopt_deployment_id(id);
  for (const auto& kind : migration_kinds()) {
    std::uint64_t copied = 0;
    while (progress[kind] != done) {
      auto p = copy_page(kind, from, to, progress[kind]);
      copied += p.copied;
      progress[kind] = p.next;
      save(progress);
      report(kind, copied);
    }
  }
}

migration_check verify_migration(const record_store& from, const record_store& to) {
  migration_check check;
  for (const auto& kind : migration_kinds()) compare_kind(kind, from, to, check);
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
