// Reads on a replica (storage/postgresql/replicas.hpp): a replica is read only when its change
// log's head is at least the node's floor on the same timeline. The "replica" here is a schema of
// its own on the test server whose `change_head` the test sets: a head far ahead on another
// timeline is what an asynchronous replica shows after it replayed an old primary's commits that
// the promoted standby never got.

#include "storage/postgresql/connection.hpp"
#include "storage/postgresql/postgresql_store.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

using namespace cl::storage;

TEST_CASE("a replica whose log head is on another timeline serves no read, however far its head",
          "[postgresql][replicas]") {
  auto replica_url = cl::testing::fresh_postgresql_url();
  postgresql_settings settings;
  settings.url = replica_url;
  open_postgresql_store(settings);  // its schema, migrated
  pg::connection replica{replica_url};
  settings.url = cl::testing::fresh_postgresql_url();
  settings.cache_bytes = 0;  // every read goes to a server
  settings.replica_url = replica_url;
  auto store = open_postgresql_store(settings);
  store->apply({[](write_txn& tx) {
    tx.resources().put("t1", "res_1", resource_header{}, R"({"id":"res_1"})");
    tx.log_change(change_entry{0, "t1", change_kind::resource, "res_1", change_op::created, 1000, {}, {}, {}, 0});
    return true;
  }});
  pg::connection primary{settings.url};
  auto timeline = primary.run({"SELECT timeline FROM change_head"}).integer(0, 0);
  CHECK(timeline >= 1);  // the commit stamped the head with the primary's timeline
  REQUIRE(cl::testing::eventually([&] { return store->caches_current(); }));
  auto use = [&] { return *postgresql_use_of(*store); };

  // Far ahead, on another history: the primary answers, and the metric says why.
  replica.exec("UPDATE change_head SET seq = 1000, timeline = " + std::to_string(timeline + 1));
  CHECK(store->resources().get("t1", "res_1") == std::optional<std::string>{R"({"id":"res_1"})"});
  CHECK(use().reads_on_replica == 0);
  CHECK(use().replica_elsewhere >= 1);

  // The same head on the primary's timeline: the replica is read (it holds no rows here, so the
  // read finds nothing: what the check above kept the reader from).
  replica.exec("UPDATE change_head SET seq = 1000, timeline = " + std::to_string(timeline));
  auto elsewhere = use().replica_elsewhere;
  CHECK_FALSE(store->resources().get("t1", "res_1").has_value());
  CHECK(use().reads_on_replica == 1);
  CHECK(use().replica_elsewhere == elsewhere);
}

TEST_CASE("a primary behind what the node has seen committed serves no read: it is no longer the primary",
          "[postgresql][replicas]") {
  // What a node's pooled connection reaches through a multi-host URL after a failover: the old
  // primary, thawed from a freeze and still accepting connections until it is demoted. Here the
  // one server's head is set back under the node, as that old server's would be.
  postgresql_settings settings;
  settings.url = cl::testing::fresh_postgresql_url();
  settings.cache_bytes = 0;  // every read goes to the server
  auto store = open_postgresql_store(settings);
  auto write = [&](const std::string& id) {
    store->apply({[id](write_txn& tx) {
      tx.resources().put("t1", id, resource_header{}, R"({"id":")" + id + "\"}");
      tx.log_change(change_entry{0, "t1", change_kind::resource, id, change_op::created, 1000, {}, {}, {}, 0});
      return true;
    }});
  };
  write("res_1");
  pg::connection server{settings.url};
  auto timeline = server.run({"SELECT timeline FROM change_head"}).integer(0, 0);
  CHECK(store->resources().get("t1", "res_1").has_value());
  CHECK(postgresql_use_of(*store)->primary_behind == 0);

  write("res_2");  // the node has seen its head move on; the server is set back under it
  auto seq = server.run({"SELECT seq FROM change_head"}).integer(0, 0);
  server.exec("UPDATE change_head SET seq = " + std::to_string(seq - 1));
  CHECK_THROWS_AS(store->resources().get("t1", "res_1"), pg::unavailable);
  CHECK(postgresql_use_of(*store)->primary_behind >= 1);

  server.exec("UPDATE change_head SET seq = " + std::to_string(seq) + ", timeline = " + std::to_string(timeline - 1));
  CHECK_THROWS_AS(store->resources().get("t1", "res_1"), pg::unavailable);  // on an earlier history

  server.exec("UPDATE change_head SET timeline = " + std::to_string(timeline + 1));  // a promotion not heard of yet
  CHECK(store->resources().get("t1", "res_2").has_value());
}
