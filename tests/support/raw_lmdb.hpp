#pragma once
// Writes straight into a data dir's LMDB environment, bypassing the store: how tests build data
// dirs in the layout an older format wrote, to check the migration at open.

#include <catch2/catch.hpp>
#include <lmdb.h>

#include <functional>
#include <string>

namespace cl::testing {

/// Calls `write(put)` inside one write transaction on `<data_dir>/lmdb`; `put(db, key, value)`
/// puts a raw entry into named database `db`.
inline void write_raw_lmdb(const std::string& data_dir,
                           const std::function<void(const std::function<void(const char*, const std::string&,
                                                                             const std::string&)>&)>& write) {
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_maxdbs(env, 32);
  REQUIRE(mdb_env_open(env, (data_dir + "/lmdb").c_str(), 0, 0640) == 0);
  MDB_txn* txn = nullptr;
  REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
  write([&](const char* db, const std::string& key, const std::string& value) {
    MDB_dbi dbi;
    REQUIRE(mdb_dbi_open(txn, db, MDB_CREATE, &dbi) == 0);
    MDB_val k{key.size(), const_cast<char*>(key.data())}, v{value.size(), const_cast<char*>(value.data())};
    REQUIRE(mdb_put(txn, dbi, &k, &v, 0) == 0);
  });
  REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
}

}  // namespace cl::testing
