// The grant store keeps its two indexes (by Resource, by principal) in step under create, replace
// and delete, and answers the last-owner question from them.

#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

using namespace cl::storage;
using cl::domain::access_grant;
using cl::domain::access_role;
using cl::testing::temp_dir;

namespace {

mutation grant(std::string resource, std::string principal, access_role role) {
  return [=](write_txn& tx) {
    tx.grants().put("t1", access_grant{resource, principal, role, "u_admin", "2026-11-22T00:00:00Z"});
    return true;
  };
}

mutation revoke(std::string resource, std::string principal) {
  return [=](write_txn& tx) {
    tx.grants().erase("t1", resource, principal);
    return true;
  };
}

}  // namespace

TEST_CASE("both grant indexes stay in step under create, replace and delete", "[storage][grants]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({grant("res_1", "u_a", access_role::owner), grant("res_1", "u_b", access_role::reader),
                grant("res_2", "u_b", access_role::writer)});
  CHECK(store->grants().role("t1", "u_b", "res_1") == access_role::reader);
  CHECK(store->grants().role("t1", "u_b", "res_2") == access_role::writer);
  CHECK_FALSE(store->grants().role("t2", "u_b", "res_1"));
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("grants")) == 3);
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("grants_by_principal")) == 3);
  // Replace: one record each, the new role in both.
  store->apply({grant("res_1", "u_b", access_role::owner)});
  CHECK(store->grants().role("t1", "u_b", "res_1") == access_role::owner);
  CHECK(store->grants().grant("t1", "res_1", "u_b")->find("\"owner\"") != std::string::npos);
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("grants")) == 3);
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("grants_by_principal")) == 3);
  // Delete: gone from both.
  store->apply({revoke("res_1", "u_a")});
  CHECK_FALSE(store->grants().role("t1", "u_a", "res_1"));
  CHECK_FALSE(store->grants().grant("t1", "res_1", "u_a"));
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("grants")) == 2);
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("grants_by_principal")) == 2);
  // The grants on a Resource, in principal order, paged.
  store->apply({grant("res_1", "g_team", access_role::reader), grant("res_1", "a_bot", access_role::writer)});
  grant_query q{"t1", "res_1", {}, 2};
  auto first = store->grants().on_resource(q);
  REQUIRE(first.entries.size() == 2);
  CHECK(first.entries[0].first == "a_bot");
  CHECK(first.entries[1].first == "g_team");
  q.after = first.entries.back().first;
  auto second = store->grants().on_resource(q);
  REQUIRE(second.entries.size() == 1);
  CHECK(second.entries[0].first == "u_b");
}

TEST_CASE("another_owner answers from the grants as the transaction sees them", "[storage][grants]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({grant("res_1", "u_a", access_role::owner), grant("res_1", "u_b", access_role::writer)});
  CHECK_FALSE(store->grants().another_owner("t1", "res_1", "u_a"));
  CHECK(store->grants().another_owner("t1", "res_1", "u_b"));
  bool inside = false;
  store->apply({grant("res_1", "u_b", access_role::owner), [&](write_txn& tx) {
                  inside = tx.grants().another_owner("t1", "res_1", "u_a");
                  return true;
                }});
  CHECK(inside);
}

TEST_CASE("readable_among answers, for many Resources at once, those a caller's principals hold a grant on",
          "[storage][grants]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({grant("res_1", "u_a", access_role::owner), grant("res_2", "g_team", access_role::reader),
                grant("res_3", "u_b", access_role::reader)});
  std::vector<std::string> page{"res_1", "res_2", "res_3", "res_4", "res_1"};
  CHECK(store->grants().readable_among("t1", {"u_a", "g_team"}, page) == std::set<std::string>{"res_1", "res_2"});
  CHECK(store->grants().readable_among("t1", {"u_b"}, page) == std::set<std::string>{"res_3"});
  CHECK(store->grants().readable_among("t2", {"u_a"}, page).empty());  // another tenant's grants
  CHECK(store->grants().readable_among("t1", {}, page).empty());
  CHECK(store->grants().readable_among("t1", {"u_a"}, {}).empty());
}

TEST_CASE("principals_on answers the grantees of many Resources at once, each list in principal order",
          "[storage][grants]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({grant("res_1", "u_b", access_role::owner), grant("res_1", "u_a", access_role::reader),
                grant("res_2", "u_c", access_role::writer), grant("res_3", "u_a", access_role::reader),
                revoke("res_3", "u_a")});
  auto on = store->grants().principals_on("t1", {"res_2", "res_1", "res_3", "res_none"});
  CHECK(on == std::map<std::string, std::vector<std::string>>{{"res_1", {"u_a", "u_b"}}, {"res_2", {"u_c"}}});
  CHECK(store->grants().principals_on("t2", {"res_1"}).empty());  // another tenant's
  CHECK(store->grants().principals_on("t1", {}).empty());
}

TEST_CASE("two owners demoting each other through two nodes at once: one stays an owner", "[storage][grants][postgresql]") {
  // PUT .../grants/{principal}: a Resource keeps at least one owner. Each demotion reads the grant
  // and asks whether another owner remains; the reads of a write lock what they found, so the
  // second demotion sees the first and refuses.
  cl::testing::racing_stores nodes{"grants"};
  nodes.a->apply({grant("res_1", "u_a", access_role::owner), grant("res_1", "u_b", access_role::owner)});
  auto demote = [](write_txn& tx, const std::string& principal) {
    return tx.grants().grant("t1", "res_1", principal).has_value() && tx.grants().another_owner("t1", "res_1", principal);
  };
  auto kept = nodes.race(
    [&](write_txn& tx, const std::function<bool()>& wait) {
      if (!demote(tx, "u_b") || !wait()) return false;
      return grant("res_1", "u_b", access_role::writer)(tx);
    },
    [&](write_txn& tx) { return demote(tx, "u_a") && grant("res_1", "u_a", access_role::writer)(tx); });
  CHECK(kept == std::pair<bool, bool>{true, false});
  CHECK(nodes.a->grants().role("t1", "u_a", "res_1") == access_role::owner);
  CHECK(nodes.a->grants().role("t1", "u_b", "res_1") == access_role::writer);
}
