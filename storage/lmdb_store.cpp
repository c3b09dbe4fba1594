#include "storage/record_store.hpp"

#include <lmdb.h>

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

std::string tenant_key(std::string_view tenant, std::string_view id) {
  std::string k;
  k.reserve(tenant.size() + 1 + id.size());
  k.append(tenant).push_back('\0');
  k.append(id);
  return k;
}

/// One LMDB environment with named databases; keys are prefixed by tenant.
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
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
    try {
      check(mdb_dbi_open(txn, "meta", MDB_CREATE, &meta_), "open meta");
      check(mdb_dbi_open(txn, "resources", MDB_CREATE, &resources_), "open resources");
      MDB_val k = val("format_version"), v{};
      rc = mdb_get(txn, meta_, &k, &v);
      if (rc == MDB_NOTFOUND) {
        auto text = std::to_string(lmdb_format_version);
        MDB_val nv = val(text);
        check(mdb_put(txn, meta_, &k, &nv, 0), "write format version");
      } else {
        check(rc, "read format version");
        int found = std::stoi(std::string{static_cast<char*>(v.mv_data), v.mv_size});
        if (found > lmdb_format_version)
          throw std::runtime_error("data dir " + data_dir + " has format version " + std::to_string(found)
                                   + ", newer than this build's " + std::to_string(lmdb_format_version)
                                   + "; run a newer contentlake or use another data dir");
      }
      check(mdb_txn_commit(txn), "commit");
    } catch (...) {
      mdb_txn_abort(txn);
      mdb_env_close(env_);
      throw;
    }
  }

  ~lmdb_store() override { mdb_env_close(env_); }

  std::optional<std::string> get_resource(std::string_view tenant, std::string_view id) const override {
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
    auto key = tenant_key(tenant, id);
    MDB_val k = val(key), v{};
    int rc = mdb_get(txn, resources_, &k, &v);
    std::optional<std::string> out;
    if (rc == MDB_SUCCESS) out.emplace(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_txn_abort(txn);
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) check(rc, "mdb_get");
    return out;
  }

  void put_resource(std::string_view tenant, std::string_view id, std::string_view json) override {
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
    auto key = tenant_key(tenant, id);
    MDB_val k = val(key), v = val(json);
    int rc = mdb_put(txn, resources_, &k, &v, 0);
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      check(rc, "mdb_put");
    }
    check(mdb_txn_commit(txn), "mdb_txn_commit");
  }

private:
  MDB_env* env_ = nullptr;
  MDB_dbi meta_ = 0;
  MDB_dbi resources_ = 0;
};

}  // namespace

std::shared_ptr<record_store> open_lmdb_store(const std::string& data_dir, std::size_t map_size_mib) {
  return std::make_shared<lmdb_store>(data_dir, map_size_mib);
}

}  // namespace cl::storage
