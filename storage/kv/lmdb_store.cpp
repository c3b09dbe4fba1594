#include "storage/kv/lmdb_store.hpp"
#include "storage/kv/activity_readers.hpp"

#include "storage/contract_store.hpp"
#include "storage/kv/codecs.hpp"
#include "storage/kv/kv.hpp"
#include "storage/stores.hpp"

#include <lmdb.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

namespace cl::storage {

namespace {

void check(int rc, const char* what) {
  if (rc == MDB_MAP_FULL) throw store_full(std::string{what} + ": " + mdb_strerror(rc));
  if (rc != MDB_SUCCESS) throw std::runtime_error(std::string{what} + ": " + mdb_strerror(rc));
}

MDB_val val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}

std::string_view view(const MDB_val& v) {
  return {static_cast<const char*>(v.mv_data), v.mv_size};
}

/// True when `key` is longer than LMDB keeps (511 bytes): no such key can be stored, so a read of
/// one finds nothing and a write of one is refused (value_unstorable), never an error of the store.
bool too_long(MDB_txn* txn, std::string_view key) {
  return key.size() > static_cast<std::size_t>(mdb_env_get_maxkeysize(mdb_txn_env(txn)));
}

/// Up to `limit` entries of `dbi` whose key starts with `prefix` and sorts after `after` (from the
/// start of the prefix when empty), in key order, as `txn` sees them.
kv::rows scan_in(MDB_txn* txn, MDB_dbi dbi, std::string_view prefix, std::string_view after, std::size_t limit) {
  kv::rows out;
  std::string start = after.empty() ? std::string{prefix} : std::string{after};
  if (after.empty() && too_long(txn, prefix)) return out;  // no key is that long: none starts with it
  MDB_cursor* cursor = nullptr;
  check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open");
  MDB_val k = val(start), v{};
  // LMDB refuses an empty key: start from the first entry then.
  int rc = mdb_cursor_get(cursor, &k, &v, start.empty() ? MDB_FIRST : MDB_SET_RANGE);
  if (rc == MDB_SUCCESS && !after.empty() && view(k) == after) rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
  while (rc == MDB_SUCCESS && out.size() < limit && view(k).substr(0, prefix.size()) == prefix) {
    out.emplace_back(std::string{view(k)}, std::string{view(v)});
    rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) check(rc, "mdb_cursor_get");
  return out;
}

std::optional<std::string> get_in(MDB_txn* txn, MDB_dbi dbi, std::string_view key) {
  if (too_long(txn, key)) return std::nullopt;
  MDB_val k = val(key), v{};
  int rc = mdb_get(txn, dbi, &k, &v);
  if (rc == MDB_NOTFOUND) return std::nullopt;
  check(rc, "mdb_get");
  return std::string{view(v)};
}

std::size_t entries_in(MDB_txn* txn, MDB_dbi dbi) {
  MDB_stat st{};
  check(mdb_stat(txn, dbi, &st), "mdb_stat");
  return st.ms_entries;
}

/// Read-only transactions kept reset between calls and renewed for the next (mdb_txn_reset,
/// mdb_txn_renew; MDB_NOTLS: any thread may renew one). A renewed one keeps its reader slot and its
/// memory; a new one allocates and zeroes ~3 KiB (a table's worth for each of 64 databases) and
/// takes the reader table's lock to find a slot, on every point read before. A reset one pins no
/// pages. At most `max_idle` are kept (each holds one of LMDB's 126 reader slots); more at once
/// are aborted when done. The kept ones sit in slots taken and filled by atomic exchange, with no
/// lock: a thread preempted between taking and giving back holds up no other reader.
class read_txns {
public:
  explicit read_txns(MDB_env* env) : env_(env) {}
  ~read_txns() {
    for (auto& slot : idle_)
      if (auto* txn = slot.load(std::memory_order_acquire)) mdb_txn_abort(txn);
  }
  read_txns(const read_txns&) = delete;
  read_txns& operator=(const read_txns&) = delete;

  MDB_txn* take() {
    for (auto& slot : idle_) {
      if (slot.load(std::memory_order_relaxed) == nullptr) continue;
      if (auto* txn = slot.exchange(nullptr, std::memory_order_acquire)) {
        int rc = mdb_txn_renew(txn);
        if (rc == MDB_SUCCESS) return txn;
        mdb_txn_abort(txn);
        check(rc, "mdb_txn_renew");
      }
    }
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
    return txn;
  }
  void give_back(MDB_txn* txn) {
    mdb_txn_reset(txn);
    for (auto& slot : idle_) {
      MDB_txn* empty = nullptr;
      if (slot.compare_exchange_strong(empty, txn, std::memory_order_release, std::memory_order_relaxed)) return;
    }
    mdb_txn_abort(txn);
  }
private:
  static constexpr std::size_t max_idle = 16;
  MDB_env* env_;
  std::array<std::atomic<MDB_txn*>, max_idle> idle_{};
};

/// A read-only transaction for one call, from `read_txns`.
struct read_txn {
  explicit read_txn(read_txns& from) : from(from), txn(from.take()) {}
  ~read_txn() { from.give_back(txn); }
  read_txn(const read_txn&) = delete;
  read_txn& operator=(const read_txn&) = delete;
  read_txns& from;
  MDB_txn* txn;
};

/// One LMDB environment with a named database per declared table.
class lmdb_engine final : public kv::engine {
public:
  std::pair<std::uint64_t, std::uint64_t> space() const override {
    MDB_envinfo info{};
    MDB_stat stat{};
    if (mdb_env_info(env_, &info) != MDB_SUCCESS || mdb_env_stat(env_, &stat) != MDB_SUCCESS) return {0, 0};
    return {static_cast<std::uint64_t>(info.me_last_pgno + 1) * stat.ms_psize, static_cast<std::uint64_t>(info.me_mapsize)};
  }

  /// `read_only`: nothing on disk changes, `lock.mdb` included (MDB_RDONLY | MDB_NOLOCK: the caller
  /// holds the data dir's lock, so no other process writes); every table must exist already.
  lmdb_engine(const std::string& data_dir, std::size_t map_size_mib, bool read_only = false) : read_only_(read_only) {
    auto dir = std::filesystem::path{data_dir} / "lmdb";
    if (!read_only) std::filesystem::create_directories(dir);
    auto names = kv::table_names();
    check(mdb_env_create(&env_), "mdb_env_create");
    check(mdb_env_set_maxdbs(env_, static_cast<MDB_dbi>(std::max<std::size_t>(64, names.size() + 8))), "mdb_env_set_maxdbs");
    if (!read_only) check(mdb_env_set_mapsize(env_, map_size_mib * 1024 * 1024), "mdb_env_set_mapsize");
    // MDB_NOTLS: read transactions are not tied to threads, since actors move between threads.
    int rc = mdb_env_open(env_, dir.c_str(), read_only ? MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS : MDB_NOTLS, 0640);
    if (rc != MDB_SUCCESS) {
      mdb_env_close(env_);
      throw std::runtime_error("cannot open LMDB in " + dir.string() + ": " + mdb_strerror(rc));
    }
    MDB_txn* txn = nullptr;
    try {
      check(mdb_txn_begin(env_, nullptr, read_only ? MDB_RDONLY : 0, &txn), "mdb_txn_begin");
      dbis_.resize(names.size());
      for (std::size_t i = 0; i < names.size(); ++i) {
        rc = mdb_dbi_open(txn, names[i].c_str(), read_only ? 0 : MDB_CREATE, &dbis_[i]);
        if (rc == MDB_NOTFOUND)
          throw std::runtime_error("the record store in " + dir.string() + " has no table " + names[i]
                                   + ": it was written by an older contentlake; start this build's `serve` on it "
                                     "once (it brings the data dir to its format), then try again");
        check(rc, "open table");
      }
      rc = mdb_txn_commit(txn);  // frees the handle whatever the result
      txn = nullptr;
      check(rc, "commit");
    } catch (...) {
      if (txn) mdb_txn_abort(txn);
      mdb_env_close(env_);
      throw;
    }
    reads_ = std::make_unique<read_txns>(env_);
  }

  ~lmdb_engine() override {
    reads_.reset();  // their transactions before the environment
    mdb_env_close(env_);
  }

  MDB_env* env() const { return env_; }
  MDB_dbi dbi(kv::table t) const { return dbis_.at(t.index); }

  std::optional<std::string> get(kv::table t, std::string_view key) const override {
    read_txn r{*reads_};
    return get_in(r.txn, dbi(t), key);
  }
  kv::rows scan(kv::table t, std::string_view prefix, std::string_view after, std::size_t limit) const override {
    read_txn r{*reads_};
    return scan_in(r.txn, dbi(t), prefix, after, limit);
  }
  std::size_t entries(kv::table t) const override {
    read_txn r{*reads_};
    return entries_in(r.txn, dbi(t));
  }
  std::optional<std::string> last_key(kv::table t) const override {
    read_txn r{*reads_};
    MDB_cursor* cursor = nullptr;
    check(mdb_cursor_open(r.txn, dbi(t), &cursor), "mdb_cursor_open");
    MDB_val k{}, v{};
    int rc = mdb_cursor_get(cursor, &k, &v, MDB_LAST);
    std::optional<std::string> out;
    if (rc == MDB_SUCCESS) out = std::string{view(k)};
    mdb_cursor_close(cursor);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) check(rc, "mdb_cursor_get");
    return out;
  }
  std::unique_ptr<kv::transaction> begin() override;
  bool read_only() const override { return read_only_; }

private:
  bool read_only_ = false;
  MDB_env* env_ = nullptr;
  std::vector<MDB_dbi> dbis_;  ///< by table index
  std::unique_ptr<read_txns> reads_;  ///< the point reads' and scans' transactions
};

/// A write transaction, or one nested in another.
class lmdb_txn final : public kv::transaction {
public:
  lmdb_txn(const lmdb_engine& e, MDB_txn* parent) : e_(e) {
    check(mdb_txn_begin(e.env(), parent, 0, &txn_), parent ? "mdb_txn_begin (nested)" : "mdb_txn_begin");
  }
  ~lmdb_txn() override {
    if (txn_) mdb_txn_abort(txn_);
  }
  lmdb_txn(const lmdb_txn&) = delete;
  lmdb_txn& operator=(const lmdb_txn&) = delete;

  std::optional<std::string> get(kv::table t, std::string_view key) const override { return get_in(txn_, e_.dbi(t), key); }
  kv::rows scan(kv::table t, std::string_view prefix, std::string_view after, std::size_t limit) const override {
    return scan_in(txn_, e_.dbi(t), prefix, after, limit);
  }
  std::size_t entries(kv::table t) const override { return entries_in(txn_, e_.dbi(t)); }
  void put(kv::table t, std::string_view key, std::string_view value) override { put_with(t, key, value, 0); }
  void append(kv::table t, std::string_view key, std::string_view value) override { put_with(t, key, value, MDB_APPEND); }
  void erase(kv::table t, std::string_view key) override {
    MDB_val k = val(key);
    int rc = mdb_del(txn_, e_.dbi(t), &k, nullptr);
    if (rc != MDB_NOTFOUND) check(rc, "mdb_del");
  }
  std::unique_ptr<kv::transaction> child() override { return std::make_unique<lmdb_txn>(e_, txn_); }
  void commit() override {
    int rc = mdb_txn_commit(txn_);  // frees the handle whatever the result
    txn_ = nullptr;
    check(rc, "mdb_txn_commit");
  }

private:
  void put_with(kv::table t, std::string_view key, std::string_view value, unsigned flags) {
    if (too_long(txn_, key)) throw value_unstorable("a key longer than LMDB keeps (511 bytes)");
    MDB_val k = val(key), v = val(value);
    check(mdb_put(txn_, e_.dbi(t), &k, &v, flags), "mdb_put");
  }

  const lmdb_engine& e_;
  MDB_txn* txn_ = nullptr;
};

std::unique_ptr<kv::transaction> lmdb_engine::begin() {
  if (read_only_) throw std::logic_error("a record store opened read-only takes no writes");
  return std::make_unique<lmdb_txn>(*this, nullptr);
}

// -- Format versions and the migrations between them (in the opening transaction: all or nothing).

namespace tables {
const kv::table meta = kv::declare_table("meta");
const kv::table contracts = kv::declare_table("contracts");
const kv::table contract_versions = kv::declare_table("contract_versions");
const kv::table contract_works = kv::declare_table("contract_works");
const kv::table activities = kv::declare_table("activities");
const kv::table activities_by_resource = kv::declare_table("activities_by_resource");
const kv::table resources = kv::declare_table("resources");
const kv::table resources_by_work = kv::declare_table("resources_by_work");
const kv::table blob_refs = kv::declare_table("blob_refs");
const kv::table grants = kv::declare_table("grants");
const kv::table activities_by_reader = kv::declare_table("activities_by_reader");
}  // namespace tables

/// Calls `visit(key, value)` for every entry of `t`, in key order, a page at a time (writes to
/// other tables, or to keys already visited, may happen between calls).
void for_each(const kv::reader& r, kv::table t, const std::function<void(const std::string&, const std::string&)>& visit) {
  std::string after;
  for (;;) {
    auto page = r.scan(t, "", after, 512);
    for (const auto& [key, value] : page) visit(key, value);
    if (page.size() < 512) return;
    after = page.back().first;
  }
}

/// `tenant\0id` + an inner id -> `tenant\0inner\0id`: the layout of the indexes built here.
std::string index_key(const std::string& key, const std::string& inner) {
  auto tenant_end = key.find('\0') + 1;
  return key.substr(0, tenant_end) + inner + '\0' + key.substr(tenant_end);
}

/// Format 1 -> 2: contract versions get their typed header, and the contract-to-Work index is
/// rebuilt from the latest versions (format 1 only ever added to it, so it held Works that later
/// versions dropped).
void migrate_to_2(kv::transaction& tx) {
  for (;;) {
    auto stale = tx.scan(tables::contract_works, "", "", 512);
    for (const auto& [key, value] : stale) tx.erase(tables::contract_works, key);
    if (stale.size() < 512) break;
  }
  for (kv::table t : {tables::contracts, tables::contract_versions}) {
    for_each(tx, t, [&](const std::string& key, const std::string& value) {
      auto c = decode_contract(value);
      if (!c) return;
      tx.put(t, key, encode_contract(c->status, c->works, c->record));
      if (t.index != tables::contracts.index) return;
      for (const auto& w : c->works) tx.put(tables::contract_works, index_key(key, w), "");
    });
  }
}

/// The Resource a stored Activity is about, from its typed header or (before format 4) its JSON.
std::string stored_activity_about(std::string_view value) {
  if (auto d = decode_activity(value)) return d->first.about_resource;
  return activity_about(value);
}

/// Format 2 -> 3: the index of Activities by the Resource they are about, built from them.
void migrate_to_3(kv::transaction& tx) {
  for_each(tx, tables::activities, [&](const std::string& key, const std::string& value) {
    auto about = stored_activity_about(value);
    if (!about.empty()) tx.put(tables::activities_by_resource, index_key(key, about), "");
  });
}

/// Format 3 -> 4: Resources and Activities get their typed header beside the JSON (what lists
/// filter on), derived once here from the JSON; the blob-to-Resource index is built.
void migrate_to_4(kv::transaction& tx) {
  for_each(tx, tables::resources, [&](const std::string& key, const std::string& json) {
    if (decode_resource(json)) return;
    auto header = resource_header_from_json(json);
    for (const auto& b : header.blobs) tx.put(tables::blob_refs, index_key(key, b), "");
    tx.put(tables::resources, key, encode_resource(header, json));
  });
  for_each(tx, tables::activities, [&](const std::string& key, const std::string& json) {
    if (!decode_activity(json)) tx.put(tables::activities, key, encode_activity(activity_header_from_json(json), json));
  });
}

/// Format 4 -> 5: the usage pairs every stored contract version names (`usages_named`).
void migrate_to_5(kv::transaction& tx) {
  for_each(tx, tables::contract_versions, [&](const std::string& key, const std::string& value) {
    auto c = decode_contract(value);  // key: tenant\0id\0version
    if (!c) return;
    for (const auto& named : usage_named_keys(key.substr(0, key.find('\0')), c->record))
      tx.put(tables::contract_works, named, "");
  });
}

/// Format 5 -> 6: the index of Resources by their Work (lists by `work_id`, a contract's fan-out in
/// the change feed), built from the Resources' headers.
void migrate_to_6(kv::transaction& tx) {
  for_each(tx, tables::resources, [&](const std::string& key, const std::string& value) {
    auto decoded = decode_resource(value);
    if (decoded && !decoded->first.work_id.empty())
      tx.put(tables::resources_by_work, index_key(key, decoded->first.work_id), "");
  });
}

/// Format 6 -> 7: nothing to convert. The change log may now hold `policy` entries, which a
/// format-6 binary cannot read (its feed would take the gap for retention): it must refuse the dir.
void migrate_to_7(kv::transaction&) {}

/// Format 7 -> 8: the index of Activities by who may read them (storage/kv/activity_readers.hpp),
/// built from the Activities and the grants on their Resources.
void migrate_to_8(kv::transaction& tx) {
  for_each(tx, tables::activities, [&](const std::string& key, const std::string& value) {
    auto cut = key.find('\0');  // key: tenant\0activity
    auto tenant = key.substr(0, cut), id = key.substr(cut + 1);
    auto about = stored_activity_about(value);
    if (about.empty()) {
      tx.put(tables::activities_by_reader, tenant + '\0' + std::string{kv::everyone} + '\0' + id, "");
      return;
    }
    auto prefix = tenant + '\0' + about + '\0';  // grants: tenant\0resource\0principal
    std::string after;
    for (;;) {
      auto holders = tx.scan(tables::grants, prefix, after, 512);
      for (const auto& [grant, unused] : holders)
        tx.put(tables::activities_by_reader, tenant + '\0' + grant.substr(prefix.size()) + '\0' + id, "");
      if (holders.size() < 512) break;
      after = holders.back().first;
    }
  });
}

/// Refuses a newer format, migrates an older one, records this build's; answers the format found.
int check_format(kv::transaction& tx, const std::string& data_dir) {
  int found = lmdb_format_version;
  if (auto stored = tx.get(tables::meta, "format_version")) found = std::stoi(*stored);
  if (found > lmdb_format_version)
    throw std::runtime_error("data dir " + data_dir + " has format version " + std::to_string(found)
                             + ", newer than this build's " + std::to_string(lmdb_format_version)
                             + "; run a newer contentlake or use another data dir");
  const std::function<void(kv::transaction&)> steps[] = {migrate_to_2, migrate_to_3, migrate_to_4, migrate_to_5,
                                                         migrate_to_6, migrate_to_7, migrate_to_8};
  for (int to = 2; to <= lmdb_format_version; ++to)
    if (found < to) steps[to - 2](tx);
  tx.put(tables::meta, "format_version", std::to_string(lmdb_format_version));
  return found;
}

}  // namespace

void copy_lmdb(const std::string& data_dir, const std::string& target_dir) {
  auto dir = std::filesystem::path{data_dir} / "lmdb";
  if (!std::filesystem::exists(dir / "data.mdb")) throw std::runtime_error("no record store in " + dir.string());
  MDB_env* env = nullptr;
  check(mdb_env_create(&env), "mdb_env_create");
  // Read-only beside the service: readers register in the shared lock file, the writer goes on.
  int rc = mdb_env_open(env, dir.c_str(), MDB_RDONLY | MDB_NOTLS, 0640);
  if (rc == MDB_SUCCESS) rc = mdb_env_copy2(env, target_dir.c_str(), MDB_CP_COMPACT);
  mdb_env_close(env);
  if (rc != MDB_SUCCESS)
    throw std::runtime_error("cannot copy the record store in " + dir.string() + " to " + target_dir + ": "
                             + mdb_strerror(rc));
}

std::shared_ptr<record_store> open_lmdb_store_read_only(const std::string& data_dir) {
  if (!std::filesystem::exists(std::filesystem::path{data_dir} / "lmdb" / "data.mdb"))
    throw std::runtime_error(data_dir + " holds no record store (no lmdb/data.mdb in it)");
  auto engine = std::make_unique<lmdb_engine>(data_dir, 0, true);
  int found = lmdb_format_version;
  if (auto stored = engine->get(tables::meta, "format_version")) found = std::stoi(*stored);
  if (found != lmdb_format_version)
    throw std::runtime_error("data dir " + data_dir + " has format version " + std::to_string(found) + ", not this build's "
                             + std::to_string(lmdb_format_version)
                             + (found < lmdb_format_version ? ": start this build's `serve` on it once (it brings the "
                                                              "data dir to its format), then try again"
                                                            : ": use the contentlake that wrote it"));
  return kv::make_record_store(std::move(engine), "lmdb format " + std::to_string(found) + ", read-only");
}

std::shared_ptr<record_store> open_lmdb_store(const std::string& data_dir, std::size_t map_size_mib) {
  auto engine = std::make_unique<lmdb_engine>(data_dir, map_size_mib);
  auto tx = engine->begin();
  auto found = check_format(*tx, data_dir);
  tx->commit();
  tx.reset();
  auto description = "lmdb format " + std::to_string(lmdb_format_version);
  if (found != lmdb_format_version) description += "; migrated from format " + std::to_string(found);
  return kv::make_record_store(std::move(engine), std::move(description));
}

}  // namespace cl::storage
