#include "storage/record_store.hpp"

#include "domain/json_text.hpp"
#include "storage/contract_store.hpp"

#include <lmdb.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <filesystem>
#include <stdexcept>

namespace cl::storage {

namespace {

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS) throw std::runtime_error(std::string{what} + ": " + mdb_strerror(rc));
}

MDB_val val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}

std::string_view view(const MDB_val& v) {
  return {static_cast<const char*>(v.mv_data), v.mv_size};
}

/// The LMDB name of each table (stable: it is the on-disk name).
constexpr const char* table_name(table t) {
  switch (t) {
    case table::resources: return "resources";
    case table::versions: return "versions";
    case table::works: return "works";
    case table::sources: return "sources";
    case table::activities: return "activities";
    case table::id_index: return "id_index";
    case table::ledger: return "ledger";
    case table::changes: return "changes";
    case table::agents: return "agents";
    case table::contracts: return "contracts";
    case table::contract_versions: return "contract_versions";
    case table::contract_works: return "contract_works";
    case table::grants: return "grants";
    case table::grants_by_principal: return "grants_by_principal";
    case table::ledger_expiry: return "ledger_expiry";
    case table::change_consumers: return "change_consumers";
    case table::activities_by_resource: return "activities_by_resource";
    case table::blob_uploads: return "blob_uploads";
    case table::blob_upload_expiry: return "blob_upload_expiry";
    case table::blob_versions: return "blob_versions";
    case table::blob_refs: return "blob_refs";
    case table::count_: break;
  }
  return nullptr;
}

constexpr std::size_t table_count = static_cast<std::size_t>(table::count_);

constexpr bool every_table_named() {
  for (std::size_t i = 0; i < table_count; ++i)
    if (!table_name(static_cast<table>(i))) return false;
  return true;
}
static_assert(every_table_named(), "a table in storage::table has no LMDB name in table_name()");

std::string sequence_key(std::uint64_t seq) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; --i, seq >>= 8) k[static_cast<std::size_t>(i)] = static_cast<char>(seq & 0xff);
  return k;
}

std::uint64_t sequence_of(std::string_view key) {
  std::uint64_t seq = 0;
  for (char c : key) seq = (seq << 8) | static_cast<unsigned char>(c);
  return seq;
}

/// Up to `limit` entries of `dbi` whose key starts with `prefix` and sorts after `after` (from the
/// start of the prefix when empty), in key order, as `txn` sees them.
std::vector<std::pair<std::string, std::string>> scan_in(MDB_txn* txn, MDB_dbi dbi, std::string_view prefix,
                                                         std::string_view after, std::size_t limit) {
  std::vector<std::pair<std::string, std::string>> out;
  MDB_cursor* cursor = nullptr;
  check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open");
  std::string start = after.empty() ? std::string{prefix} : std::string{after};
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

/// Aborts a transaction unless it was committed or handed on.
struct txn_guard {
  MDB_txn* txn = nullptr;
  ~txn_guard() {
    if (txn) mdb_txn_abort(txn);
  }
};

class lmdb_store;

class lmdb_write_txn final : public write_txn {
public:
  lmdb_write_txn(const lmdb_store& store, MDB_txn* txn, std::uint64_t& next_seq)
    : store_(store),
      txn_(txn),
      next_seq_(next_seq),
      contracts_(make_kv_contract_store(*this, this)),
      grants_(make_kv_grant_store(*this, this)),
      ledger_(make_kv_ledger_store(*this, this)),
      resources_(make_kv_resource_store(*this, this)),
      activities_(make_kv_activity_store(*this, this)),
      catalog_(make_kv_catalog_store(*this, this)),
      blobs_(make_kv_blob_store(*this, this)) {}
  std::optional<std::string> get(table t, std::string_view key) const override;
  void put(table t, std::string_view key, std::string_view value) override;
  void erase(table t, std::string_view key) override;
  std::vector<std::pair<std::string, std::string>> scan(table t, std::string_view prefix, std::string_view after,
                                                        std::size_t limit) const override;
  const contract_reads& contracts() const override { return *contracts_; }
  contract_writes& contracts() override { return *contracts_; }
  const grant_reads& grants() const override { return *grants_; }
  grant_writes& grants() override { return *grants_; }
  const ledger_reads& ledger() const override { return *ledger_; }
  ledger_writes& ledger() override { return *ledger_; }
  const resource_reads& resources() const override { return *resources_; }
  resource_writes& resources() override { return *resources_; }
  const activity_reads& activities() const override { return *activities_; }
  activity_writes& activities() override { return *activities_; }
  const catalog_reads& catalog() const override { return *catalog_; }
  catalog_writes& catalog() override { return *catalog_; }
  const blob_reads& blobs() const override { return *blobs_; }
  blob_writes& blobs() override { return *blobs_; }
  std::uint64_t log_change(const change_entry& entry) override;
  std::uint64_t writes() const override { return writes_; }

private:
  const lmdb_store& store_;
  MDB_txn* txn_;
  std::uint64_t& next_seq_;
  std::uint64_t writes_ = 0;
  std::unique_ptr<contract_writes> contracts_;
  std::unique_ptr<grant_writes> grants_;
  std::unique_ptr<ledger_writes> ledger_;
  std::unique_ptr<resource_writes> resources_;
  std::unique_ptr<activity_writes> activities_;
  std::unique_ptr<catalog_writes> catalog_;
  std::unique_ptr<blob_writes> blobs_;
};

/// One LMDB environment with a named database per table.
class lmdb_store final : public record_store {
public:
  lmdb_store(const std::string& data_dir, std::size_t map_size_mib) {
    auto dir = std::filesystem::path{data_dir} / "lmdb";
    std::filesystem::create_directories(dir);
    check(mdb_env_create(&env_), "mdb_env_create");
    check(mdb_env_set_maxdbs(env_, 32), "mdb_env_set_maxdbs");
    check(mdb_env_set_mapsize(env_, map_size_mib * 1024 * 1024), "mdb_env_set_mapsize");
    // MDB_NOTLS: read transactions are not tied to threads, since actors move between threads.
    int rc = mdb_env_open(env_, dir.c_str(), MDB_NOTLS, 0640);
    if (rc != MDB_SUCCESS) {
      mdb_env_close(env_);
      throw std::runtime_error("cannot open LMDB in " + dir.string() + ": " + mdb_strerror(rc));
    }
    txn_guard txn;
    try {
      check(mdb_txn_begin(env_, nullptr, 0, &txn.txn), "mdb_txn_begin");
      check(mdb_dbi_open(txn.txn, "meta", MDB_CREATE, &meta_), "open meta");
      for (std::size_t i = 0; i < table_count; ++i)
        check(mdb_dbi_open(txn.txn, table_name(static_cast<table>(i)), MDB_CREATE, &dbis_[i]), "open table");
      check_format(txn.txn, data_dir);
      next_seq_ = read_last_change(txn.txn) + 1;
      committed_.store(next_seq_ - 1);
      int commit_rc = mdb_txn_commit(txn.txn);  // frees the handle whatever the result
      txn.txn = nullptr;
      check(commit_rc, "commit");
    } catch (...) {
      if (txn.txn) mdb_txn_abort(txn.txn);
      txn.txn = nullptr;
      mdb_env_close(env_);
      throw;
    }
  }

  ~lmdb_store() override { mdb_env_close(env_); }

  const contract_reads& contracts() const override { return *contracts_; }
  const grant_reads& grants() const override { return *grants_; }
  const ledger_reads& ledger() const override { return *ledger_; }
  const resource_reads& resources() const override { return *resources_; }
  const activity_reads& activities() const override { return *activities_; }
  const catalog_reads& catalog() const override { return *catalog_; }
  const blob_reads& blobs() const override { return *blobs_; }

  MDB_dbi dbi(table t) const { return dbis_[static_cast<std::size_t>(t)]; }

  std::optional<std::string> get(table t, std::string_view key) const override {
    txn_guard txn;
    check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn.txn), "mdb_txn_begin");
    MDB_val k = val(key), v{};
    int rc = mdb_get(txn.txn, dbi(t), &k, &v);
    if (rc == MDB_NOTFOUND) return std::nullopt;
    check(rc, "mdb_get");
    return std::string{view(v)};
  }

  std::size_t entries(table t) const override {
    txn_guard txn;
    check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn.txn), "mdb_txn_begin");
    MDB_stat st{};
    check(mdb_stat(txn.txn, dbi(t), &st), "mdb_stat");
    return st.ms_entries;
  }

  std::vector<std::pair<std::string, std::string>> scan(table t, std::string_view prefix, std::string_view after,
                                                        std::size_t limit) const override {
    txn_guard txn;
    check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn.txn), "mdb_txn_begin");
    return scan_in(txn.txn, dbi(t), prefix, after, limit);
  }

  std::vector<bool> apply(const std::vector<mutation>& batch) override {
    std::vector<bool> kept(batch.size(), false);
    txn_guard parent;
    check(mdb_txn_begin(env_, nullptr, 0, &parent.txn), "mdb_txn_begin");
    std::uint64_t seq = next_seq_;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      txn_guard child;
      check(mdb_txn_begin(env_, parent.txn, 0, &child.txn), "mdb_txn_begin (nested)");
      std::uint64_t before = seq;
      lmdb_write_txn view{*this, child.txn, seq};
      bool keep = false;
      try {
        keep = batch[i](view);
      } catch (const std::exception&) {
        keep = false;  // a throwing mutation loses only its own changes
      }
      if (keep) {
        int rc = mdb_txn_commit(child.txn);  // frees the handle whatever the result
        child.txn = nullptr;
        check(rc, "mdb_txn_commit (nested)");
        kept[i] = true;
      } else {
        seq = before;
      }
    }
    // One durable commit (and one fsync) for the whole group.
    int rc = mdb_txn_commit(parent.txn);  // frees the handle whatever the result
    parent.txn = nullptr;
    check(rc, "mdb_txn_commit");
    bool logged = seq != next_seq_;
    next_seq_ = seq;
    committed_.store(seq - 1);
    if (logged) notify(seq - 1);
    return kept;
  }

  std::uint64_t last_change() const override { return committed_.load(); }

  std::vector<change_entry> read_from(std::uint64_t after, std::size_t limit) const override {
    std::vector<change_entry> out;
    auto start = sequence_key(after + 1);
    txn_guard txn;
    check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn.txn), "mdb_txn_begin");
    MDB_cursor* cursor = nullptr;
    check(mdb_cursor_open(txn.txn, dbi(table::changes), &cursor), "mdb_cursor_open");
    MDB_val k = val(start), v{};
    int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
    while (rc == MDB_SUCCESS && out.size() < limit) {
      if (auto e = decode_change(sequence_of(view(k)), view(v))) out.push_back(std::move(*e));
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) check(rc, "mdb_cursor_get");
    return out;
  }

  std::uint64_t subscribe(commit_listener listener) override {
    std::lock_guard<std::mutex> guard{listeners_mutex_};
    listeners_.emplace(++listener_handles_, std::move(listener));
    return listener_handles_;
  }

  void unsubscribe(std::uint64_t handle) override {
    std::lock_guard<std::mutex> guard{listeners_mutex_};
    listeners_.erase(handle);
  }

  std::vector<std::pair<std::string, std::uint64_t>> consumers() const override {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (const auto& [name, applied] : scan(table::change_consumers, {}, {}, 100000))
      out.emplace_back(name, applied.size() == 8 ? sequence_of(applied) : 0);
    return out;
  }

private:
  void check_format(MDB_txn* txn, const std::string& data_dir) {
    MDB_val k = val("format_version"), v{};
    int rc = mdb_get(txn, meta_, &k, &v);
    int found = lmdb_format_version;
    if (rc != MDB_NOTFOUND) {
      check(rc, "read format version");
      found = std::stoi(std::string{view(v)});
    }
    if (found > lmdb_format_version)
      throw std::runtime_error("data dir " + data_dir + " has format version " + std::to_string(found)
                               + ", newer than this build's " + std::to_string(lmdb_format_version)
                               + "; run a newer contentlake or use another data dir");
    if (found < 2) migrate_to_2(txn);
    if (found < 3) migrate_to_3(txn);
    if (found < 4) migrate_to_4(txn);
    if (found < 5) migrate_to_5(txn);
    auto text = std::to_string(lmdb_format_version);
    MDB_val nv = val(text);
    check(mdb_put(txn, meta_, &k, &nv, 0), "write format version");
  }

  /// Format 1 -> 2, in the opening transaction (all or nothing): contract versions get their typed
  /// header, and the contract-to-Work index is rebuilt from the latest versions (format 1 only ever
  /// added to it, so it held Works that later versions dropped).
  void migrate_to_2(MDB_txn* txn) {
    auto put = [&](table t, const std::string& key, const std::string& value) {
      MDB_val k = val(key), v = val(value);
      check(mdb_put(txn, dbi(t), &k, &v, 0), "migrate to format 2");
    };
    check(mdb_drop(txn, dbi(table::contract_works), 0), "clear the contract index");
    for (table t : {table::contracts, table::contract_versions}) {
      std::vector<std::pair<std::string, stored_contract>> found;
      MDB_cursor* cursor = nullptr;
      check(mdb_cursor_open(txn, dbi(t), &cursor), "mdb_cursor_open");
      MDB_val k{}, v{};
      for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT))
        if (auto c = decode_contract(view(v))) found.emplace_back(std::string{view(k)}, std::move(*c));
      mdb_cursor_close(cursor);
      for (const auto& [key, c] : found) {
        put(t, key, encode_contract(c.status, c.works, c.record));
        if (t != table::contracts) continue;
        auto tenant_end = key.find('\0') + 1;  // tenant\0id -> tenant\0work\0id
        for (const auto& w : c.works) put(table::contract_works, key.substr(0, tenant_end) + w + '\0' + key.substr(tenant_end), "");
      }
    }
  }

  /// Format 2 -> 3: the index of Activities by the Resource they are about, built from them.
  void migrate_to_3(MDB_txn* txn) {
    std::vector<std::string> index;
    MDB_cursor* cursor = nullptr;
    check(mdb_cursor_open(txn, dbi(table::activities), &cursor), "mdb_cursor_open");
    MDB_val k{}, v{};
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      auto about = activity_about(view(v));
      if (about.empty()) continue;
      auto key = std::string{view(k)};  // tenant\0act -> tenant\0res\0act
      auto tenant_end = key.find('\0') + 1;
      index.push_back(key.substr(0, tenant_end) + about + '\0' + key.substr(tenant_end));
    }
    mdb_cursor_close(cursor);
    for (const auto& key : index) {
      MDB_val ik = val(key), iv = val("");
      check(mdb_put(txn, dbi(table::activities_by_resource), &ik, &iv, 0), "migrate to format 3");
    }
  }

  /// Format 3 -> 4: Resources and Activities get their typed header beside the JSON (what lists
  /// filter on), derived once here from the JSON; the blob-to-Resource index is built.
  void migrate_to_4(MDB_txn* txn) {
    std::vector<std::string> refs;
    for (table t : {table::resources, table::activities}) {
      std::vector<std::pair<std::string, std::string>> rewritten;
      MDB_cursor* cursor = nullptr;
      check(mdb_cursor_open(txn, dbi(t), &cursor), "mdb_cursor_open");
      MDB_val k{}, v{};
      for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
        auto json = view(v);
        if (t == table::resources ? decode_resource(json).has_value() : decode_activity(json).has_value()) continue;
        if (t == table::resources) {
          auto header = resource_header_from_json(json);
          auto key = std::string{view(k)};  // tenant\0res -> blob refs tenant\0blb\0res
          auto tenant_end = key.find('\0') + 1;
          for (const auto& b : header.blobs) refs.push_back(key.substr(0, tenant_end) + b + '\0' + key.substr(tenant_end));
          rewritten.emplace_back(key, encode_resource(header, json));
        } else {
          rewritten.emplace_back(std::string{view(k)}, encode_activity(activity_header_from_json(json), json));
        }
      }
      mdb_cursor_close(cursor);
      for (const auto& [key, value] : rewritten) {
        MDB_val nk = val(key), nv = val(value);
        check(mdb_put(txn, dbi(t), &nk, &nv, 0), "migrate to format 4");
      }
    }
    for (const auto& key : refs) {
      MDB_val rk = val(key), rv = val("");
      check(mdb_put(txn, dbi(table::blob_refs), &rk, &rv, 0), "migrate to format 4");
    }
  }

  /// Format 4 -> 5: the usage pairs every stored contract version names (`usages_named`).
  void migrate_to_5(MDB_txn* txn) {
    std::vector<std::string> keys;
    MDB_cursor* cursor = nullptr;
    check(mdb_cursor_open(txn, dbi(table::contract_versions), &cursor), "mdb_cursor_open");
    MDB_val k{}, v{};
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
      auto key = view(k);  // tenant\0id\0version
      auto c = decode_contract(view(v));
      if (!c) continue;
      for (auto& named : usage_named_keys(key.substr(0, key.find('\0')), c->record)) keys.push_back(std::move(named));
    }
    mdb_cursor_close(cursor);
    for (const auto& key : keys) {
      MDB_val nk = val(key), nv = val("");
      check(mdb_put(txn, dbi(table::contract_works), &nk, &nv, 0), "migrate to format 5");
    }
  }

  std::uint64_t read_last_change(MDB_txn* txn) {
    MDB_cursor* cursor = nullptr;
    check(mdb_cursor_open(txn, dbi(table::changes), &cursor), "mdb_cursor_open");
    MDB_val k{}, v{};
    int rc = mdb_cursor_get(cursor, &k, &v, MDB_LAST);
    mdb_cursor_close(cursor);
    if (rc == MDB_NOTFOUND) return 0;
    check(rc, "read last change");
    return sequence_of(view(k));
  }

  void notify(std::uint64_t last) {
    std::vector<commit_listener> copy;
    {
      std::lock_guard<std::mutex> guard{listeners_mutex_};
      for (const auto& [handle, l] : listeners_) copy.push_back(l);
    }
    for (const auto& l : copy) l(last);
  }

  MDB_env* env_ = nullptr;
  MDB_dbi meta_ = 0;
  std::array<MDB_dbi, table_count> dbis_{};
  std::uint64_t next_seq_ = 1;  ///< touched only by `apply` (one writer) and the constructor
  std::atomic<std::uint64_t> committed_{0};  ///< last committed sequence, read by any thread
  std::mutex listeners_mutex_;
  std::map<std::uint64_t, commit_listener> listeners_;
  std::uint64_t listener_handles_ = 0;
  std::unique_ptr<contract_writes> contracts_ = make_kv_contract_store(*this, nullptr);  ///< reads only
  std::unique_ptr<grant_writes> grants_ = make_kv_grant_store(*this, nullptr);           ///< reads only
  std::unique_ptr<ledger_writes> ledger_ = make_kv_ledger_store(*this, nullptr);         ///< reads only
  std::unique_ptr<resource_writes> resources_ = make_kv_resource_store(*this, nullptr);
  std::unique_ptr<activity_writes> activities_ = make_kv_activity_store(*this, nullptr);
  std::unique_ptr<catalog_writes> catalog_ = make_kv_catalog_store(*this, nullptr);
  std::unique_ptr<blob_writes> blobs_ = make_kv_blob_store(*this, nullptr);
};

std::optional<std::string> lmdb_write_txn::get(table t, std::string_view key) const {
  MDB_val k = val(key), v{};
  int rc = mdb_get(txn_, store_.dbi(t), &k, &v);
  if (rc == MDB_NOTFOUND) return std::nullopt;
  check(rc, "mdb_get");
  return std::string{view(v)};
}

void lmdb_write_txn::put(table t, std::string_view key, std::string_view value) {
  ++writes_;
  MDB_val k = val(key), v = val(value);
  check(mdb_put(txn_, store_.dbi(t), &k, &v, 0), "mdb_put");
}

void lmdb_write_txn::erase(table t, std::string_view key) {
  ++writes_;
  MDB_val k = val(key);
  int rc = mdb_del(txn_, store_.dbi(t), &k, nullptr);
  if (rc != MDB_NOTFOUND) check(rc, "mdb_del");
}

std::vector<std::pair<std::string, std::string>> lmdb_write_txn::scan(table t, std::string_view prefix,
                                                                      std::string_view after, std::size_t limit) const {
  return scan_in(txn_, store_.dbi(t), prefix, after, limit);
}

std::uint64_t lmdb_write_txn::log_change(const change_entry& entry) {
  ++writes_;
  auto seq = next_seq_++;
  auto key = sequence_key(seq);
  auto bytes = encode_change(entry);
  MDB_val k = val(key), v = val(bytes);
  check(mdb_put(txn_, store_.dbi(table::changes), &k, &v, MDB_APPEND), "append change");
  return seq;
}

}  // namespace

std::string big_endian_key(std::uint64_t n) {
  return sequence_key(n);
}

std::string tenant_key(std::string_view tenant, std::string_view id) {
  std::string k;
  k.reserve(tenant.size() + 1 + id.size());
  k.append(tenant).push_back('\0');
  k.append(id);
  return k;
}

mutation acknowledge_changes(std::string name, std::uint64_t applied) {
  return [name = std::move(name), applied](write_txn& tx) {
    tx.put(table::change_consumers, name, sequence_key(applied));
    return true;
  };
}

mutation forget_consumer(std::string name) {
  return [name = std::move(name)](write_txn& tx) {
    tx.erase(table::change_consumers, name);
    return true;
  };
}

mutation prune_changes(std::int64_t cutoff_ms, std::size_t limit) {
  return [cutoff_ms, limit](write_txn& tx) {
    // Nothing a registered consumer still needs goes, however old.
    std::uint64_t needed_after = UINT64_MAX;
    for (const auto& [name, applied] : tx.scan(table::change_consumers, "", 100000))
      needed_after = std::min(needed_after, applied.size() == 8 ? sequence_of(applied) : 0);
    auto oldest = tx.scan(table::changes, "", limit + 1);
    // The newest entry always stays: the sequence continues from it after a restart.
    if (oldest.size() <= limit && !oldest.empty()) oldest.pop_back();
    if (oldest.size() > limit) oldest.resize(limit);
    for (const auto& [key, value] : oldest) {
      auto seq = sequence_of(key);
      auto e = decode_change(seq, value);
      // Format-1 entries carry no time: they are pruned as old.
      if (seq > needed_after || (e && e->at_ms != 0 && e->at_ms >= cutoff_ms)) break;
      tx.erase(table::changes, key);
    }
    return true;
  };
}

std::shared_ptr<record_store> open_lmdb_store(const std::string& data_dir, std::size_t map_size_mib) {
  return std::make_shared<lmdb_store>(data_dir, map_size_mib);
}

}  // namespace cl::storage
