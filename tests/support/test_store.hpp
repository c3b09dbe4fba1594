#pragma once
// The record store the storage and actor tests run against: LMDB in a data dir, the in-memory
// backend when CL_TEST_STORE=memory, or PostgreSQL when CL_TEST_STORE=postgresql (ctest runs those
// suites once per backend; the PostgreSQL run gets the server the `postgres_start` fixture started,
// tests/support/postgres, and each store a schema of its own in it). Tests that need a data dir on
// disk (reopening, format migrations) are tagged [lmdb] and open LMDB themselves; tests of the
// key-value layer itself are tagged [kv]; the other backends' runs leave them out.

#include "storage/kv/codecs.hpp"
#include "storage/kv/kv.hpp"
#include "storage/stores.hpp"
#include "storage/kv/lmdb_store.hpp"
#include "storage/kv/memory_store.hpp"
#include "storage/postgresql/connection.hpp"
#include "storage/postgresql/postgresql_store.hpp"
#include "tests/support/eventually.hpp"

#include <atomic>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

namespace cl::testing {

/// True in the run against the in-memory backend.
inline bool memory_backend() {
  const char* b = std::getenv("CL_TEST_STORE");
  return b && std::string{b} == "memory";
}

/// True in the run against PostgreSQL.
inline bool postgresql_backend() {
  const char* b = std::getenv("CL_TEST_STORE");
  return b && std::string{b} == "postgresql";
}

/// True on the key-value backends (LMDB, memory): their tables (`raw`) exist. A test of a typed
/// store checks its behaviour on every backend, and its key-value tables where they exist.
inline bool key_value_backend() { return !postgresql_backend(); }

/// The connection string of the test server (the file CL_TEST_PG_URL_FILE names).
inline std::string test_postgresql_url() {
  const char* file = std::getenv("CL_TEST_PG_URL_FILE");
  if (!file) throw std::runtime_error("CL_TEST_PG_URL_FILE is not set: run the PostgreSQL suites through ctest");
  std::ifstream in{file};
  std::string url;
  std::getline(in, url);
  if (url.empty()) throw std::runtime_error(std::string{"no PostgreSQL test server: "} + file + " is empty or missing");
  return url;
}

/// A connection string to a new, empty schema of the test server (one per store a test opens).
inline std::string fresh_postgresql_url() {
  static std::atomic<int> made{0};
  auto base = test_postgresql_url();
  auto schema = "t" + std::to_string(::getpid()) + "_" + std::to_string(made++);
  storage::pg::connection admin{base};
  admin.exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE; CREATE SCHEMA " + schema);
  return base + " options='-c search_path=" + schema + "'";
}

/// Two nodes' record stores on one fresh PostgreSQL schema, for two writers of one row: `b` is
/// opened with an application_name of its own, by which `race` sees it wait on a lock.
struct racing_stores {
  std::string b_name;
  std::shared_ptr<storage::record_store> a, b;

  explicit racing_stores(const std::string& label) : b_name{"cl_" + label + "_" + std::to_string(::getpid())} {
    auto url = fresh_postgresql_url();
    a = storage::open_postgresql_store({url, {}, 2});
    b = storage::open_postgresql_store({url + " application_name=" + b_name, {}, 2});
  }

  /// `held` runs on `a` and calls `wait()` after its reads; `wait` returns true once `other`, run on
  /// `b` meanwhile, has committed or waits on a lock (pg_stat_activity). A read that took no lock
  /// lets `other` commit in between; one that did makes it wait. Returns what each apply kept.
  std::pair<bool, bool> race(const std::function<bool(storage::write_txn&, const std::function<bool()>&)>& held,
                             const storage::mutation& other) {
    storage::pg::connection admin{test_postgresql_url()};
    std::atomic<bool> read{false}, committed{false};
    bool kept_b = false;
    std::exception_ptr failed_b;
    std::thread racer{[&] {
      while (!read) std::this_thread::yield();
      try {
        kept_b = b->apply({other}).front();
      } catch (...) {
        failed_b = std::current_exception();
      }
      committed = true;
    }};
    auto b_waits = [&] {
      return admin.run({"SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'"},
                       {b_name}).integer(0, 0) > 0;
    };
    std::function<bool()> wait = [&] {
      read = true;
      return eventually([&] { return committed || b_waits(); });
    };
    bool kept_a = false;
    std::exception_ptr failed_a;
    try {
      kept_a = a->apply({[&](storage::write_txn& tx) { return held(tx, wait); }}).front();
    } catch (...) {
      failed_a = std::current_exception();
    }
    read = true;  // `held` refused (or failed) before it waited: the racer still runs
    racer.join();
    for (const auto& failed : {failed_a, failed_b})
      if (failed) std::rethrow_exception(failed);
    return {kept_a, kept_b};
  }
};

/// A fresh record store of the backend under test (`dir` is used by LMDB only).
inline std::shared_ptr<storage::record_store> open_store(const std::string& dir) {
  if (postgresql_backend()) return storage::open_postgresql_store({fresh_postgresql_url(), {}, 4});
  return memory_backend() ? storage::open_memory_store() : storage::open_lmdb_store(dir, 64);
}

/// A raw table, by its on-disk name: how tests look at the key layouts under the typed stores.
inline storage::kv::table raw(const char* name) {
  return storage::kv::declare_table(name);
}

}  // namespace cl::testing
