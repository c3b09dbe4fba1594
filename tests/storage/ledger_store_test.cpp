// The ledger store keeps its record and its age index in step: put, a key reused after
// retention, and pruning in age order that never removes a younger record under a reused key.

#include "domain/idempotency.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

std::string record_at(std::int64_t created_ms) {
  cl::domain::ledger_record r;
  r.fingerprint = "sha256:00";
  r.created_ms = created_ms;
  r.answer.status = 201;
  r.answer.body = "{}";
  return cl::domain::ledger_record_json(r);
}

mutation put(cl::domain::ledger_key key, std::int64_t at) {
  return [=](write_txn& tx) {
    tx.ledger().put(key, at, record_at(at));
    return true;
  };
}

}  // namespace

TEST_CASE("the ledger's records and age index stay in step; pruning goes oldest first", "[storage][ledger]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto a = cl::domain::ledger_key{"t1", "a_app", "k1"}, b = cl::domain::ledger_key{"t1", "a_app", "k2"},
       c = cl::domain::ledger_key{"t2", "a_app", "k1"};
  store->apply({put(a, 1000), put(b, 2000), put(c, 3000)});
  CHECK(store->ledger().record(a) == record_at(1000));
  CHECK(store->ledger().records() == 3);
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("ledger_expiry")) == 3);
  CHECK_FALSE(store->ledger().prune_due(1000));
  CHECK(store->ledger().prune_due(1001));
  // Key a reused after retention: the old age entry goes with it.
  store->apply({[&](write_txn& tx) {
    tx.ledger().drop_expired(a, 1000);
    tx.ledger().put(a, 5000, record_at(5000));
    return true;
  }});
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("ledger_expiry")) == 3);
  // Pruning before 4000 removes b and c (oldest first), never the reused a.
  store->apply({[](write_txn& tx) {
    tx.ledger().prune(4000, 1000);
    return true;
  }});
  CHECK(store->ledger().record(a) == record_at(5000));
  CHECK_FALSE(store->ledger().record(b));
  CHECK_FALSE(store->ledger().record(c));
  CHECK(store->ledger().records() == 1);
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("ledger_expiry")) == 1);
}

TEST_CASE("two nodes racing one Idempotency-Key: one effect, the other finds the record and replays",
          "[storage][ledger][postgresql]") {
  // Two record stores on one database, as two nodes. Each runs the guarded write the actors build
  // (storage/plan_write): look the key up, and when it is fresh, write the effect and the record
  // in the same transaction. The second blocks on the key's row, loses (a unique violation) and is
  // run again: it then finds the first one's record.
  auto url = cl::testing::fresh_postgresql_url();
  auto a = open_postgresql_store({url, {}, 2}), b = open_postgresql_store({url, {}, 2});
  auto key = cl::domain::ledger_key{"t1", "a_app", "same-key"};
  for (int round = 0; round < 20; ++round) {
    key.key = "same-key-" + std::to_string(round);
    std::atomic<int> effects{0}, replays{0};
    auto guarded = [&](const std::string& resource) -> mutation {
      return [&, resource](write_txn& tx) {
        if (tx.ledger().record(key)) {
          ++replays;
          return false;
        }
        tx.resources().put("t1", resource, resource_header{}, "{}");
        tx.ledger().put(key, 1000, record_at(1000));
        return true;
      };
    };
    std::vector<bool> kept_a, kept_b;
    std::thread other{[&] { kept_b = b->apply({guarded("res_b" + std::to_string(round))}); }};
    kept_a = a->apply({guarded("res_a" + std::to_string(round))});
    other.join();
    effects = static_cast<int>(kept_a[0]) + static_cast<int>(kept_b[0]);
    CHECK(effects == 1);
    CHECK(replays >= 1);  // the loser read the winner's record (at its first run or when run again)
    CHECK(static_cast<bool>(a->get_resource("t1", "res_a" + std::to_string(round)))
          != static_cast<bool>(a->get_resource("t1", "res_b" + std::to_string(round))));
  }
}

TEST_CASE("a write that fails in the database fails its own mutation only, though sent without waiting",
          "[storage][ledger][postgresql]") {
  // On PostgreSQL the ledger's insert is sent in the pipeline and its answer read at the mutation's
  // RELEASE: the second mutation's insert of a key the first one stored fails there (a unique key),
  // and only its own writes are rolled back; the mutations before and after it are kept.
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto key = cl::domain::ledger_key{"t1", "a_app", "k-once"};
  auto write = [&](std::string resource, bool with_key) -> mutation {
    return [=](write_txn& tx) {
      tx.resources().put("t1", resource, resource_header{}, "{\"r\":\"" + resource + "\"}");
      if (with_key) tx.ledger().put(key, 1000, record_at(1000));
      return true;
    };
  };
  auto kept = store->apply({write("res_1", true), write("res_2", true), write("res_3", false)});
  REQUIRE(kept.size() == 3);
  CHECK(kept[0]);
  CHECK_FALSE(kept[1]);
  CHECK(kept[2]);
  CHECK(store->get_resource("t1", "res_1"));
  CHECK_FALSE(store->get_resource("t1", "res_2"));
  CHECK(store->get_resource("t1", "res_3"));
  CHECK(store->ledger().record(key));
  CHECK(store->ledger().records() == 1);
}

TEST_CASE("a statement first used after a write that failed in the same round trip works afterwards",
          "[storage][ledger][postgresql]") {
  // On PostgreSQL a statement is prepared on first use; sent after a write that fails in the same
  // pipeline, its preparation is skipped with the rest. The connection must not take it for
  // prepared: the next batch, on the same connection, uses it again.
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto key = cl::domain::ledger_key{"t1", "a_app", "k-twice"};
  auto kept = store->apply({[&](write_txn& tx) {
    tx.ledger().put(key, 1000, record_at(1000));
    tx.ledger().put(key, 1000, record_at(1000));  // fails (the key is taken), answered with the next read
    return !tx.catalog().get(catalog_kind::work, "t1", "wrk_none");
  }});
  CHECK_FALSE(kept[0]);
  for (int i = 0; i < 3; ++i) {
    kept = store->apply({[&](write_txn& tx) {
      if (tx.catalog().get(catalog_kind::work, "t1", "wrk_none")) return false;
      tx.resources().put("t1", "res_after_" + std::to_string(i), resource_header{}, "{}");
      return true;
    }});
    CHECK(kept[0]);
  }
}

TEST_CASE("a guarded write whose key is stored replays, in a group with others, and writes nothing of its own",
          "[storage][ledger]") {
  // The guarded write the actors build: look the key up; fresh, write the effect and the record.
  // Every backend: the stored key replays, the group's other writes are kept, nothing is doubled.
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  cl::domain::ledger_key key{"t1", "a_app", "k_once"};
  int replays = 0;
  auto guarded = [&](const std::string& resource) -> mutation {
    return [&, resource](write_txn& tx) {
      if (tx.ledger().record(key)) {
        ++replays;
        return false;
      }
      tx.resources().put("t1", resource, resource_header{}, "{\"by\":\"" + resource + "\"}");
      tx.ledger().put(key, 1000, record_at(1000));
      return true;
    };
  };
  mutation other = [](write_txn& tx) {
    tx.resources().put("t1", "res_other", resource_header{}, "{}");
    return true;
  };
  CHECK(store->apply({guarded("res_first")}) == std::vector<bool>{true});
  CHECK(replays == 0);
  CHECK(store->apply({other, guarded("res_second")}) == std::vector<bool>{true, false});
  CHECK(replays == 1);
  CHECK(store->get_resource("t1", "res_first"));
  CHECK_FALSE(store->get_resource("t1", "res_second"));
  CHECK(store->get_resource("t1", "res_other"));
  CHECK(store->ledger().records() == 1);
}
