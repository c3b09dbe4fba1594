// The LMDB record store: group commit with per-mutation rollback, the change log, scans, reopen.

#include "storage/identity.hpp"
#include "storage/record_store.hpp"
#include "tests/support/raw_lmdb.hpp"
#include "tests/support/service_fixture.hpp"

#include <catch2/catch.hpp>
#include <lmdb.h>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

mutation put_resource(std::string tenant, std::string id, std::string json) {
  return [=](write_txn& tx) {
    tx.put(table::resources, tenant_key(tenant, id), json);
    tx.log_change(change_entry{0, tenant, change_kind::resource, id, change_op::created, 1});
    return true;
  };
}

}  // namespace

TEST_CASE("a group commits every kept mutation and rolls back only the refused ones", "[storage]") {
  temp_dir dir;
  auto store = open_lmdb_store(dir.path, 64);
  std::vector<mutation> batch = {
    put_resource("t1", "res_a", "{\"a\":1}"),
    [](write_txn& tx) {
      tx.put(table::resources, tenant_key("t1", "res_refused"), "{}");
      tx.log_change(change_entry{0, "t1", change_kind::resource, "res_refused", change_op::created, 1});
      return false;
    },
    [](write_txn&) -> bool { throw std::runtime_error("boom"); },
    put_resource("t1", "res_b", "{\"b\":2}"),
  };
  auto kept = store->apply(batch);
  CHECK(kept == std::vector<bool>{true, false, false, true});
  CHECK(store->get_resource("t1", "res_a") == std::string{"{\"a\":1}"});
  CHECK(store->get_resource("t1", "res_b") == std::string{"{\"b\":2}"});
  CHECK_FALSE(store->get_resource("t1", "res_refused"));
  // The refused mutation's change-log entry is gone too: sequences stay dense.
  CHECK(store->last_change() == 2);
  auto changes = store->scan(table::changes, "", "", 10);
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].second.find("res_b") != std::string::npos);
}

TEST_CASE("a mutation reads what earlier mutations of its group wrote", "[storage]") {
  temp_dir dir;
  auto store = open_lmdb_store(dir.path, 64);
  std::optional<std::string> seen;
  std::vector<mutation> batch = {put_resource("t1", "res_a", "first"), [&](write_txn& tx) {
                                   seen = tx.get(table::resources, tenant_key("t1", "res_a"));
                                   return true;
                                 }};
  store->apply(batch);
  CHECK(seen == std::string{"first"});
}

TEST_CASE("keys are scoped by tenant and scans page by key", "[storage]") {
  temp_dir dir;
  auto store = open_lmdb_store(dir.path, 64);
  std::vector<mutation> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(put_resource("t1", "res_" + std::to_string(i), "x"));
  batch.push_back(put_resource("t2", "res_0", "other tenant"));
  store->apply(batch);
  CHECK(store->get_resource("t2", "res_0") == std::string{"other tenant"});
  CHECK_FALSE(store->get_resource("t2", "res_1"));
  auto first = store->scan(table::resources, tenant_key("t1", ""), "", 2);
  REQUIRE(first.size() == 2);
  auto next = store->scan(table::resources, tenant_key("t1", ""), first.back().first, 10);
  REQUIRE(next.size() == 3);
  CHECK(next.back().first == tenant_key("t1", "res_4"));
}

TEST_CASE("stop and start keep records and the change-log position", "[storage]") {
  temp_dir dir;
  {
    auto store = open_lmdb_store(dir.path, 64);
    store->apply({put_resource("t1", "res_a", "{\"hash\":\"sha256:00\"}"), put_resource("t1", "res_b", "b")});
  }
  auto store = open_lmdb_store(dir.path, 64);
  CHECK(store->get_resource("t1", "res_a") == std::string{"{\"hash\":\"sha256:00\"}"});
  CHECK(store->last_change() == 2);
  store->apply({put_resource("t1", "res_c", "c")});
  CHECK(store->last_change() == 3);
}

TEST_CASE("a data dir written by a newer format is refused with a clear message", "[storage]") {
  temp_dir dir;
  { open_lmdb_store(dir.path, 64); }
  cl::testing::write_raw_lmdb(dir.path, [](const auto& put) { put("meta", "format_version", "99"); });
  try {
    open_lmdb_store(dir.path, 64);
    FAIL("a newer format was accepted");
  } catch (const std::runtime_error& e) {
    CHECK(std::string{e.what()}.find("newer") != std::string::npos);
  }
}

TEST_CASE("inside a transaction: scans see the group's own writes, writes() counts them, entries() counts a table",
          "[storage]") {
  temp_dir dir;
  auto store = open_lmdb_store(dir.path, 64);
  std::vector<std::pair<std::string, std::string>> seen;
  std::uint64_t before = 0, after = 0;
  std::vector<mutation> batch = {
    put_resource("t1", "res_a", "a"),
    [&](write_txn& tx) {
      before = tx.writes();
      tx.put(table::grants, tenant_key("t1", std::string{"res_a\0u_x", 9}), "g1");
      tx.put(table::grants, tenant_key("t1", std::string{"res_a\0u_y", 9}), "g2");
      tx.put(table::grants, tenant_key("t1", "res_b"), "other");
      seen = tx.scan(table::grants, tenant_key("t1", std::string{"res_a\0", 6}), 10);
      after = tx.writes();
      return true;
    }};
  store->apply(batch);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].second == "g1");
  CHECK(seen[1].second == "g2");
  CHECK(after - before == 3);
  CHECK(store->entries(table::grants) == 3);
  CHECK(store->entries(table::ledger) == 0);
}

TEST_CASE("a development key that was published is refused, not trusted", "[identity]") {
  temp_dir dir;
  auto made = load_or_create_dev_identity(dir.path, {});
  CHECK(load_or_create_dev_identity(dir.path, {}).kid == made.kid);  // the same key, loaded again
  try {
    load_or_create_dev_identity(dir.path, {made.kid});
    FAIL("a published key was loaded");
  } catch (const std::runtime_error& e) {
    CHECK(std::string{e.what()}.find("published") != std::string::npos);
  }
  CHECK(published_key_ids().size() == 1);  // the key once committed to this repository
}
