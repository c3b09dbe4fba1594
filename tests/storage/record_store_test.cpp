// The record store on every backend (LMDB, in memory, PostgreSQL): group commit with per-mutation rollback, the
// change log, scans through a transaction's own writes and erases; reopening (LMDB only).

#include "storage/identity.hpp"
#include "domain/base64url.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/raw_lmdb.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>
#include <lmdb.h>

#include <atomic>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

mutation put_resource(std::string tenant, std::string id, std::string json) {
  return [=](write_txn& tx) {
    tx.resources().put(tenant, id, resource_header{}, json);
    tx.log_change(change_entry{0, tenant, change_kind::resource, id, change_op::created, 1, {}, {}, {}, 0});
    return true;
  };
}

}  // namespace

TEST_CASE("a group commits every kept mutation and rolls back only the refused ones", "[storage]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::vector<mutation> batch = {
    put_resource("t1", "res_a", "{\"a\":1}"),
    [](write_txn& tx) {
      tx.resources().put("t1", "res_refused", resource_header{}, "{}");
      tx.log_change(change_entry{0, "t1", change_kind::resource, "res_refused", change_op::created, 1, {}, {}, {}, 0});
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
  auto changes = store->read_from(0, 10);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].id == "res_a");
  CHECK(changes[1].id == "res_b");
  CHECK(changes[1].seq == 2);
}

TEST_CASE("a group whose refusals wrote nothing runs each mutation once", "[storage]") {
  // A refusal that wrote nothing leaves nothing to undo. (On PostgreSQL a group runs without
  // savepoints first and again with one per mutation only when one needed it: a refusal after a
  // write, a throw. That second run runs the mutations again; this group must not need it.)
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  int runs[3] = {0, 0, 0};
  auto counted = [&](int i, mutation m) -> mutation {
    return [&runs, i, m](write_txn& tx) {
      ++runs[i];
      return m(tx);
    };
  };
  std::vector<mutation> batch = {
    counted(0, put_resource("t1", "res_a", "{\"a\":1}")),
    counted(1, [](write_txn& tx) { return tx.resources().get("t1", "res_missing").has_value(); }),
    counted(2, put_resource("t1", "res_b", "{\"b\":2}")),
  };
  CHECK(store->apply(batch) == std::vector<bool>{true, false, true});
  CHECK(runs[0] == 1);
  CHECK(runs[1] == 1);
  CHECK(runs[2] == 1);
  CHECK(store->read_from(0, 10).size() == 2);
}

TEST_CASE("a mutation reads what earlier mutations of its group wrote", "[storage]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::optional<std::string> seen;
  std::vector<mutation> batch = {put_resource("t1", "res_a", "first"), [&](write_txn& tx) {
                                   seen = tx.resources().get("t1", "res_a");
                                   return true;
                                 }};
  store->apply(batch);
  CHECK(seen == std::string{"first"});
}

TEST_CASE("put_if_absent writes a catalog record once, and one written by a mutation that was undone is written again",
          "[storage]") {
  // On PostgreSQL the writer remembers the catalog keys it saw committed and skips them: a key
  // whose INSERT was rolled back (the mutation threw, or the group ran again) must not be among them.
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto ensure = [](std::string id, std::string record) -> mutation {
    return [=](write_txn& tx) {
      tx.catalog().put_if_absent(catalog_kind::agent, "t1", id, record);
      return true;
    };
  };
  mutation ensure_then_throw = [](write_txn& tx) -> bool {
    tx.catalog().put_if_absent(catalog_kind::agent, "t1", "agt_undone", "first");
    throw std::runtime_error("boom");
  };
  CHECK(store->apply({ensure("agt_kept", "first"), ensure_then_throw}) == std::vector<bool>{true, false});
  CHECK_FALSE(store->catalog().get(catalog_kind::agent, "t1", "agt_undone"));
  CHECK(store->apply({ensure("agt_kept", "second"), ensure("agt_undone", "second")}) == std::vector<bool>{true, true});
  CHECK(store->catalog().get(catalog_kind::agent, "t1", "agt_kept") == std::string{"first"});
  CHECK(store->catalog().get(catalog_kind::agent, "t1", "agt_undone") == std::string{"second"});
  // Another tenant, the same id: its own record.
  CHECK(store->apply({[](write_txn& tx) {
          tx.catalog().put_if_absent(catalog_kind::agent, "t2", "agt_kept", "other tenant");
          return true;
        }}) == std::vector<bool>{true});
  CHECK(store->catalog().get(catalog_kind::agent, "t2", "agt_kept") == std::string{"other tenant"});
}

TEST_CASE("keys are scoped by tenant and scans page by key", "[storage][kv]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::vector<mutation> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(put_resource("t1", "res_" + std::to_string(i), "x"));
  batch.push_back(put_resource("t2", "res_0", "other tenant"));
  store->apply(batch);
  CHECK(store->get_resource("t2", "res_0") == std::string{"other tenant"});
  CHECK_FALSE(store->get_resource("t2", "res_1"));
  auto first = cl::storage::kv::engine_of(*store).scan(cl::testing::raw("resources"), cl::storage::kv::tenant_key("t1", ""), "", 2);
  REQUIRE(first.size() == 2);
  auto next = cl::storage::kv::engine_of(*store).scan(cl::testing::raw("resources"), cl::storage::kv::tenant_key("t1", ""), first.back().first, 10);
  REQUIRE(next.size() == 3);
  CHECK(next.back().first == cl::storage::kv::tenant_key("t1", "res_4"));
}

TEST_CASE("stop and start keep records and the change-log position", "[storage][lmdb]") {
  temp_dir dir;
  {
    auto store = cl::storage::open_lmdb_store(dir.path, 64);
    store->apply({put_resource("t1", "res_a", "{\"hash\":\"sha256:00\"}"), put_resource("t1", "res_b", "b")});
  }
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  CHECK(store->get_resource("t1", "res_a") == std::string{"{\"hash\":\"sha256:00\"}"});
  CHECK(store->last_change() == 2);
  store->apply({put_resource("t1", "res_c", "c")});
  CHECK(store->last_change() == 3);
}

// On LMDB point reads reuse their read transactions (reset, then renewed): each read must still see
// every commit before it, and readers beyond those kept must give their slots back (LMDB has 126).
// Every backend keeps the same promise.
TEST_CASE("point reads see each commit before them, from many threads at once, round after round",
          "[storage]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  for (int version = 0; version < 5; ++version) {
    store->apply({put_resource("t1", "res_a", "v" + std::to_string(version))});
    CHECK(store->get_resource("t1", "res_a") == "v" + std::to_string(version));
  }
  // 40 rounds of 48 threads reading at once: 1,920 reads, far more than 126 slots could serve
  // if a reader kept one.
  std::atomic<int> wrong{0}, failed{0};
  for (int round = 0; round < 40; ++round) {
    store->apply({put_resource("t1", "res_a", "r" + std::to_string(round))});
    std::vector<std::thread> readers;
    for (int k = 0; k < 48; ++k)
      readers.emplace_back([&, round] {
        try {
          if (store->get_resource("t1", "res_a") != "r" + std::to_string(round)) ++wrong;
        } catch (const std::exception&) {
          ++failed;
        }
      });
    for (auto& t : readers) t.join();
  }
  CHECK(wrong == 0);
  CHECK(failed == 0);
}

TEST_CASE("a data dir written by a newer format is refused with a clear message", "[storage][lmdb]") {
  temp_dir dir;
  { cl::storage::open_lmdb_store(dir.path, 64); }
  cl::testing::write_raw_lmdb(dir.path, [](const auto& put) { put("meta", "format_version", "99"); });
  try {
    cl::storage::open_lmdb_store(dir.path, 64);
    FAIL("a newer format was accepted");
  } catch (const std::runtime_error& e) {
    CHECK(std::string{e.what()}.find("newer") != std::string::npos);
  }
}

TEST_CASE("inside a transaction: scans see the group's own writes, writes() counts them, entries() counts a table",
          "[storage][kv]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::vector<std::pair<std::string, std::string>> seen;
  std::uint64_t before = 0, after = 0;
  std::vector<mutation> batch = {
    put_resource("t1", "res_a", "a"),
    [&](write_txn& tx) {
      before = tx.writes();
      cl::storage::kv::writer_of(tx).put(cl::testing::raw("grants"), cl::storage::kv::tenant_key("t1", std::string{"res_a\0u_x", 9}), "g1");
      cl::storage::kv::writer_of(tx).put(cl::testing::raw("grants"), cl::storage::kv::tenant_key("t1", std::string{"res_a\0u_y", 9}), "g2");
      cl::storage::kv::writer_of(tx).put(cl::testing::raw("grants"), cl::storage::kv::tenant_key("t1", "res_b"), "other");
      seen = cl::storage::kv::writer_of(tx).scan(cl::testing::raw("grants"), cl::storage::kv::tenant_key("t1", std::string{"res_a\0", 6}), "", 10);
      after = tx.writes();
      return true;
    }};
  store->apply(batch);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].second == "g1");
  CHECK(seen[1].second == "g2");
  CHECK(after - before == 3);
  CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("grants")) == 3);
  CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("ledger")) == 0);
}

TEST_CASE("erases inside a group hide committed entries from its scans and counts; a refused mutation's do not",
          "[storage][kv]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto grants = cl::testing::raw("grants");
  auto key = [](int i) { return cl::storage::kv::tenant_key("t1", "g_" + std::to_string(10 + i)); };
  store->apply({[&](write_txn& tx) {
    for (int i = 0; i < 10; ++i) cl::storage::kv::writer_of(tx).put(grants, key(i), std::to_string(i));
    return true;
  }});
  std::vector<std::string> page, after_refusal;
  std::size_t counted = 0;
  store->apply({
    [&](write_txn& tx) {  // refused: its erases must not leak into the next mutation
      for (int i = 0; i < 10; ++i) cl::storage::kv::writer_of(tx).erase(grants, key(i));
      return false;
    },
    [&](write_txn& tx) {
      auto& w = cl::storage::kv::writer_of(tx);
      for (const auto& [k, v] : w.scan(grants, cl::storage::kv::tenant_key("t1", ""), "", 3)) after_refusal.push_back(v);
      for (int i : {0, 1, 2, 4}) w.erase(grants, key(i));  // the first page's entries, and one past it
      w.put(grants, key(3), "3'");
      counted = w.entries(grants);
      for (const auto& [k, v] : w.scan(grants, cl::storage::kv::tenant_key("t1", ""), "", 3)) page.push_back(v);
      return true;
    }});
  CHECK(after_refusal == std::vector<std::string>{"0", "1", "2"});
  CHECK(page == std::vector<std::string>{"3'", "5", "6"});
  CHECK(counted == 6);
  CHECK(cl::storage::kv::engine_of(*store).entries(grants) == 6);
  auto rest = cl::storage::kv::engine_of(*store).scan(grants, "", key(6), 10);
  REQUIRE(rest.size() == 3);
  CHECK(rest.front().second == "7");
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

TEST_CASE("two nodes replacing one Resource from the same version: one wins, the other sees the new version",
          "[storage][postgresql]") {
  // The update_token check the write plans make (read the version, refuse when it moved, write):
  // on PostgreSQL the write is a compare-and-set on the version read, so a node that read the old
  // version before the other committed loses and runs again, and then refuses.
  auto url = cl::testing::fresh_postgresql_url();
  auto a = open_postgresql_store({url, {}, 2}), b = open_postgresql_store({url, {}, 2});
  a->apply({[](write_txn& tx) {
    tx.resources().put("t1", "res_x", resource_header{"", "CHAPTER", "en", "ver_0", {}}, "{\"v\":0}");
    return true;
  }});
  for (int round = 0; round < 20; ++round) {
    auto expected = "ver_" + std::to_string(round);
    auto next = [&](const std::string& node) -> mutation {
      return [=](write_txn& tx) {
        auto h = tx.resources().header("t1", "res_x");
        if (!h || h->version != expected) return false;  // 412: the token is stale
        tx.resources().put("t1", "res_x", resource_header{"", "CHAPTER", "en", "ver_" + std::to_string(round + 1), {}},
                           "{\"by\":\"" + node + "\"}");
        return true;
      };
    };
    std::vector<bool> kept_b;
    std::thread other{[&] { kept_b = b->apply({next("b")}); }};
    auto kept_a = a->apply({next("a")});
    other.join();
    CHECK(static_cast<int>(kept_a[0]) + static_cast<int>(kept_b[0]) == 1);
    // Read where it was written: the other node's cache lets go of the old version only when its
    // follower reads the change log (no entry is logged here), as the next test shows.
    CHECK((kept_a[0] ? a : b)->resources().header("t1", "res_x")->version == "ver_" + std::to_string(round + 1));
  }
}

TEST_CASE("a Resource another node wrote leaves this node's hot-record cache through the change log",
          "[storage][postgresql]") {
  // Node b reads a Resource (now in its cache); node a replaces it. b answers the new version once
  // its follower has read a's change-log entry (every 100 ms), with no request of its own to the
  // record; a answers it at once.
  auto url = cl::testing::fresh_postgresql_url();
  auto a = open_postgresql_store({url, {}, 2}), b = open_postgresql_store({url, {}, 2});
  auto write = [](std::string version, std::string json) -> mutation {
    return [=](write_txn& tx) {
      tx.resources().put("t1", "res_h", resource_header{"", "CHAPTER", "en", version, {}}, json);
      tx.log_change(change_entry{0, "t1", change_kind::resource, "res_h", change_op::replaced, 1, version, {}, {}, 0});
      return true;
    };
  };
  a->apply({write("ver_1", "{\"v\":1}")});
  REQUIRE(b->resources().get("t1", "res_h") == std::optional<std::string>{"{\"v\":1}"});
  REQUIRE(b->resources().header("t1", "res_h")->version == "ver_1");
  a->apply({write("ver_2", "{\"v\":2}")});
  CHECK(a->resources().get("t1", "res_h") == std::optional<std::string>{"{\"v\":2}"});
  CHECK(cl::testing::eventually([&] { return b->resources().get("t1", "res_h") == std::optional<std::string>{"{\"v\":2}"}; },
                                5000));
  CHECK(b->resources().header("t1", "res_h")->version == "ver_2");
  // A node without the cache reads the database every time.
  auto c = open_postgresql_store({url, {}, 2, std::chrono::milliseconds{2000}, 0});
  a->apply({write("ver_3", "{\"v\":3}")});
  CHECK(c->resources().get("t1", "res_h") == std::optional<std::string>{"{\"v\":3}"});
}

TEST_CASE("a batch whose connection is cut before its COMMIT runs again on a new connection, once",
          "[storage][postgresql]") {
  // A server that restarted, or a connection a network device dropped, is found only when the
  // batch first waits for an answer, which may be in its middle (BEGIN travels with the first
  // statement waited for). Nothing of it committed: it runs again on a new connection, and its
  // entries are logged once.
  auto name = "cl_cut_" + std::to_string(::getpid());
  auto url = cl::testing::fresh_postgresql_url() + " application_name=" + name;
  auto store = open_postgresql_store({url, {}, 1});
  cl::storage::pg::connection admin{cl::testing::test_postgresql_url()};
  int runs = 0;
  mutation write = [&](write_txn& tx) {
    ++runs;
    tx.resources().put("t1", "res_cut", resource_header{}, "{\"v\":1}");
    tx.log_change(change_entry{0, "t1", change_kind::resource, "res_cut", change_op::created, 1, {}, {}, {}, 0});
    if (runs == 1) {
      // The writer's connection, the only one of this store's pool leased now: ended, and waited for.
      auto cut = admin.run({"SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
                            "WHERE application_name = $1"},
                           {name});
      REQUIRE(cut.integer(0, 0) == 1);
    }
    return tx.resources().get("t1", "res_cut").has_value();  // waits for an answer: the first run's fails

  };
  CHECK(store->apply({write}) == std::vector<bool>{true});
  CHECK(runs == 2);
  CHECK(store->get_resource("t1", "res_cut") == std::optional<std::string>{"{\"v\":1}"});
  CHECK(store->read_from(0, 10).size() == 1);
}

TEST_CASE("the secrets fingerprint the first node records stays, but one from a secrets file replaces a node's own",
          "[storage][postgresql]") {
  auto url = cl::testing::fresh_postgresql_url();
  auto store = open_postgresql_store({url, {}, 2});  // migrates
  postgresql_settings pg{url, {}};
  CHECK(record_secrets_fingerprint(pg, "aaaa", false) == "aaaa");  // the first node, its own secrets
  CHECK(record_secrets_fingerprint(pg, "bbbb", false) == "aaaa");  // another node with its own: told the first
  CHECK(record_secrets_fingerprint(pg, "cccc", true) == "cccc");   // the move to a secrets file
  CHECK(record_secrets_fingerprint(pg, "dddd", true) == "cccc");   // another file: told the cluster's
  CHECK(record_secrets_fingerprint(pg, "eeee", false) == "cccc");  // a node without the file: likewise
}

TEST_CASE("the secrets fingerprint tells whether two places hold the same sealing keys, and none of them", "[identity]") {
  temp_dir a, b;
  auto file = a.path + "/cluster.secrets";
  write_secrets_file(file);
  auto own = secrets_fingerprint(secret_place{a.path});
  CHECK(own.size() == 16);
  CHECK(secrets_fingerprint(secret_place{a.path}) == own);  // created once, read again
  CHECK(secrets_fingerprint(secret_place{b.path}) != own);  // another data dir, other keys
  CHECK(secrets_fingerprint(secret_place{a.path, file}) == secrets_fingerprint(secret_place{b.path, file}));
  CHECK(secrets_fingerprint(secret_place{a.path, file}) != own);
  auto key = load_or_create_secret(secret_place{a.path}, "page-token.key");
  CHECK(own.find(cl::domain::hex_encode(key).substr(0, 8)) == std::string::npos);
}

TEST_CASE("a key with U+0000 is refused alike on every backend, never cut", "[storage]") {
  // PostgreSQL's text ends at U+0000: a store that sent such a key as given would write, and find,
  // the key cut there (another tenant's record); on the key-value backends it would sit beside the
  // separator of a compound key. Every backend refuses it, reads and writes alike
  // (tests/storage/differential_test.cpp compares them).
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  REQUIRE(store->apply({put_resource("t_bars", "res_a", "{\"owner\":\"bars\"}")}) == std::vector<bool>{true});
  std::string evil{"t_bars\0evil", 11};
  CHECK_THROWS_AS(store->get_resource(evil, "res_a"), value_unstorable);
  CHECK(store->apply({put_resource(evil, "res_b", "{}")}) == std::vector<bool>{false});
  CHECK_THROWS_AS(store->get_resource("t_bars", std::string{"res_a\0x", 7}), value_unstorable);
  CHECK_THROWS_AS(store->get_resource("t_bars", "res_\xff"), value_unstorable);  // not UTF-8
  // Whatever the backend, nothing reached the tenant the key would have been cut to.
  CHECK_FALSE(store->get_resource("t_bars", "res_b"));
  CHECK(store->get_resource("t_bars", "res_a") == std::string{"{\"owner\":\"bars\"}"});
}
