// The contract store: versions, latest, the exact contract-to-Work index under create, replace and
// a version that drops a Work, typed list queries, and the migration of a data dir written by
// format 1 (bare JSON values, an index that was only ever added to).

#include "tests/support/raw_lmdb.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

std::string contract_json(const std::string& id, int version, const std::string& status,
                          const std::vector<std::string>& works, const std::string& usage_terms = "") {
  std::string list;
  for (const auto& w : works) list += (list.empty() ? "\"" : ",\"") + w + "\"";
  return R"({"id":")" + id + R"(","version":)" + std::to_string(version) + R"(,"status":")" + status
         + R"(","title":"C","valid_from":"2020-01-01T00:00:00Z","work_ids":[)" + list
         + R"(],"territorial_rights":[],"manifestation_rights":[],"usage_terms":[)" + usage_terms
         + R"(],"handling_terms":[]})";
}

mutation put(const std::string& id, int version, const std::string& status, std::vector<std::string> works) {
  return [=](write_txn& tx) {
    tx.contracts().put_version("t1", id, version, status, works, contract_json(id, version, status, works));
    return true;
  };
}

std::vector<std::string> ids_for_work(const record_store& store, const std::string& work) {
  std::vector<std::string> out;
  for (const auto& record : store.contracts().for_work("t1", work)) out.push_back(record.substr(7, 5));
  return out;
}

std::vector<std::string> ids(const record_page& page) {
  std::vector<std::string> out;
  for (const auto& e : page.entries) out.push_back(e.first);
  return out;
}

}  // namespace

TEST_CASE("the Work index follows each contract's latest version, also when a version drops a Work", "[storage][contracts]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({put("ctr_a", 1, "ACTIVE", {"wk_1", "wk_2"}), put("ctr_b", 1, "DRAFT", {"wk_2"})});
  CHECK(ids_for_work(*store, "wk_1") == std::vector<std::string>{"ctr_a"});
  CHECK(ids_for_work(*store, "wk_2") == std::vector<std::string>{"ctr_a", "ctr_b"});
  // Version 2 of ctr_a drops wk_2 and adds wk_3: the index says so, exactly.
  store->apply({put("ctr_a", 2, "ACTIVE", {"wk_1", "wk_3"})});
  CHECK(ids_for_work(*store, "wk_2") == std::vector<std::string>{"ctr_b"});
  CHECK(ids_for_work(*store, "wk_3") == std::vector<std::string>{"ctr_a"});
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("contract_works")) == 3);  // wk_1/a, wk_3/a, wk_2/b: nothing stale
  // The record of each version stays readable; the latest is version 2.
  CHECK(store->contracts().version("t1", "ctr_a", 1) == contract_json("ctr_a", 1, "ACTIVE", {"wk_1", "wk_2"}));
  CHECK(store->contracts().latest("t1", "ctr_a") == contract_json("ctr_a", 2, "ACTIVE", {"wk_1", "wk_3"}));
  CHECK_FALSE(store->contracts().latest("t2", "ctr_a"));
  // Inside a transaction the store sees the transaction's own writes.
  std::vector<std::string> seen;
  store->apply({put("ctr_c", 1, "ACTIVE", {"wk_9"}), [&](write_txn& tx) {
                  seen = tx.contracts().for_work("t1", "wk_9");
                  return true;
                }});
  CHECK(seen.size() == 1);
}

TEST_CASE("contract lists filter by status and Work and page by id; versions page by number", "[storage][contracts]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({put("ctr_a", 1, "ACTIVE", {"wk_1"}), put("ctr_b", 1, "DRAFT", {"wk_1"}), put("ctr_c", 1, "ACTIVE", {"wk_2"}),
                put("ctr_a", 2, "SUSPENDED", {"wk_1"}), put("ctr_a", 3, "ACTIVE", {"wk_2"})});
  contract_query q;
  q.tenant = "t1";
  CHECK(ids(store->contracts().list(q)) == std::vector<std::string>{"ctr_a", "ctr_b", "ctr_c"});
  q.status = "ACTIVE";
  CHECK(ids(store->contracts().list(q)) == std::vector<std::string>{"ctr_a", "ctr_c"});
  q.status.clear();
  q.work_id = "wk_1";
  CHECK(ids(store->contracts().list(q)) == std::vector<std::string>{"ctr_b"});  // ctr_a's latest lists wk_2
  q.work_id.clear();
  q.after = "ctr_a";
  q.limit = 1;
  CHECK(ids(store->contracts().list(q)) == std::vector<std::string>{"ctr_b"});
  contract_versions_query v;
  v.tenant = "t1";
  v.id = "ctr_a";
  CHECK(ids(store->contracts().versions(v)) == std::vector<std::string>{"1", "2", "3"});
  v.after = "1";
  v.limit = 1;
  CHECK(ids(store->contracts().versions(v)) == std::vector<std::string>{"2"});
}

TEST_CASE("a format-1 data dir is migrated at open: headers added, the Work index rebuilt exactly", "[storage][contracts][migration][lmdb]") {
  temp_dir dir;
  { cl::storage::open_lmdb_store(dir.path, 64); }
  // Rewrite it as format 1 wrote it: bare JSON values, an index entry for a Work a later version
  // dropped, format_version 1.
  cl::testing::write_raw_lmdb(dir.path, [](const auto& put_raw) {
    auto v1 = contract_json("ctr_a", 1, "ACTIVE", {"wk_1", "wk_2"});
    auto v2 = contract_json("ctr_a", 2, "ACTIVE", {"wk_1"});
    put_raw("contracts", cl::storage::kv::tenant_key("t1", "ctr_a"), v2);
    put_raw("contract_versions", cl::storage::kv::tenant_key("t1", std::string{"ctr_a"} + '\0' + cl::storage::kv::big_endian_key(1)), v1);
    put_raw("contract_versions", cl::storage::kv::tenant_key("t1", std::string{"ctr_a"} + '\0' + cl::storage::kv::big_endian_key(2)), v2);
    put_raw("contract_works", cl::storage::kv::tenant_key("t1", std::string{"wk_1"} + '\0' + "ctr_a"), "");
    put_raw("contract_works", cl::storage::kv::tenant_key("t1", std::string{"wk_2"} + '\0' + "ctr_a"), "");  // stale
    put_raw("meta", "format_version", "1");
  });
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  CHECK(store->contracts().latest("t1", "ctr_a") == contract_json("ctr_a", 2, "ACTIVE", {"wk_1"}));
  CHECK(store->contracts().version("t1", "ctr_a", 1) == contract_json("ctr_a", 1, "ACTIVE", {"wk_1", "wk_2"}));
  CHECK(ids_for_work(*store, "wk_1") == std::vector<std::string>{"ctr_a"});
  CHECK(ids_for_work(*store, "wk_2").empty());
  CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("contract_works")) == 1);
  CHECK(cl::storage::kv::engine_of(*store).get(cl::testing::raw("contracts"), cl::storage::kv::tenant_key("t1", "ctr_a"))->front() == '\x02');  // the typed header
}

namespace {

const std::string prohibits_display = R"({"usage_type":"DISPLAY","status":"PROHIBITED"})";
const std::string permits_retrieval = R"({"usage_type":"AI_RETRIEVAL","status":"PERMITTED","method":"MCP"})";

std::vector<std::pair<std::string, std::string>> sorted_usages(const record_store& store, const std::string& tenant) {
  auto named = store.contracts().usages_named(tenant);
  std::sort(named.begin(), named.end());
  return named;
}

}  // namespace

TEST_CASE("the usage pairs a tenant's contract versions name are kept, per tenant, never forgotten", "[storage][contracts]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  CHECK(store->contracts().usages_named("t1").empty());
  store->apply({[](write_txn& tx) {
    tx.contracts().put_version("t1", "ctr_a", 1, "ACTIVE", {"wk_1"},
                               contract_json("ctr_a", 1, "ACTIVE", {"wk_1"}, prohibits_display + "," + permits_retrieval));
    tx.contracts().put_version("t2", "ctr_b", 1, "DRAFT", {"wk_1"}, contract_json("ctr_b", 1, "DRAFT", {"wk_1"}, permits_retrieval));
    return true;
  }});
  using pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(sorted_usages(*store, "t1") == pairs{{"AI_RETRIEVAL", "PERMITTED"}, {"DISPLAY", "PROHIBITED"}});
  CHECK(sorted_usages(*store, "t2") == pairs{{"AI_RETRIEVAL", "PERMITTED"}});
  // A later version without the prohibition: the pair stays (an earlier version may still be
  // what a window brings back), and the Work index is not disturbed by the pairs.
  store->apply({[](write_txn& tx) {
    tx.contracts().put_version("t1", "ctr_a", 2, "ACTIVE", {"wk_1"}, contract_json("ctr_a", 2, "ACTIVE", {"wk_1"}));
    return true;
  }});
  CHECK(sorted_usages(*store, "t1") == pairs{{"AI_RETRIEVAL", "PERMITTED"}, {"DISPLAY", "PROHIBITED"}});
  CHECK(ids_for_work(*store, "wk_1") == std::vector<std::string>{"ctr_a"});
  contract_query by_work;
  by_work.tenant = "t1";
  by_work.work_id = "wk_1";
  CHECK(ids(store->contracts().list(by_work)) == std::vector<std::string>{"ctr_a"});
}

TEST_CASE("a format-4 data dir gets the usage pairs of the contract versions it holds at open", "[storage][contracts][migration][lmdb]") {
  temp_dir dir;
  { cl::storage::open_lmdb_store(dir.path, 64); }
  // As format 4 wrote it: typed contract versions and their Work index, no usage pairs.
  cl::testing::write_raw_lmdb(dir.path, [](const auto& put_raw) {
    auto v1 = contract_json("ctr_a", 1, "ACTIVE", {"wk_1"}, prohibits_display);
    auto v2 = contract_json("ctr_a", 2, "ACTIVE", {"wk_1"}, permits_retrieval);
    put_raw("contracts", cl::storage::kv::tenant_key("t1", "ctr_a"), encode_contract("ACTIVE", {"wk_1"}, v2));
    put_raw("contract_versions", cl::storage::kv::tenant_key("t1", std::string{"ctr_a"} + '\0' + cl::storage::kv::big_endian_key(1)),
            encode_contract("ACTIVE", {"wk_1"}, v1));
    put_raw("contract_versions", cl::storage::kv::tenant_key("t1", std::string{"ctr_a"} + '\0' + cl::storage::kv::big_endian_key(2)),
            encode_contract("ACTIVE", {"wk_1"}, v2));
    put_raw("contract_works", cl::storage::kv::tenant_key("t1", std::string{"wk_1"} + '\0' + "ctr_a"), "");
    put_raw("meta", "format_version", "4");
  });
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  using pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(sorted_usages(*store, "t1") == pairs{{"AI_RETRIEVAL", "PERMITTED"}, {"DISPLAY", "PROHIBITED"}});
  CHECK(sorted_usages(*store, "t2").empty());
  CHECK(ids_for_work(*store, "wk_1") == std::vector<std::string>{"ctr_a"});
}

TEST_CASE("two nodes updating one contract from the same version: one wins, the other sees the new version",
          "[storage][contracts][postgresql]") {
  // The update_token check of PATCH /contracts/{id}: read the latest version, refuse when it moved,
  // write the next. The read of a write locks the contract, so the other node waits for the commit
  // and then refuses, instead of writing the same version number over it.
  cl::testing::racing_stores nodes{"contract"};
  nodes.a->apply({put("ctr_a", 1, "ACTIVE", {"wrk_1"})});
  auto at_version_1 = [](write_txn& tx) {
    auto latest = tx.contracts().latest("t1", "ctr_a");
    return latest && latest->find("\"version\":1,") != std::string::npos;
  };
  auto kept = nodes.race(
    [&](write_txn& tx, const std::function<bool()>& wait) {
      if (!at_version_1(tx) || !wait()) return false;
      return put("ctr_a", 2, "ACTIVE", {"wrk_a"})(tx);
    },
    [&](write_txn& tx) { return at_version_1(tx) && put("ctr_a", 2, "ACTIVE", {"wrk_b"})(tx); });
  CHECK(kept == std::pair<bool, bool>{true, false});
  CHECK(ids_for_work(*nodes.a, "wrk_a") == std::vector<std::string>{"ctr_a"});
  CHECK(ids_for_work(*nodes.a, "wrk_b").empty());
}
