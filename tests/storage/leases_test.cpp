// Leases of work done once among the nodes (issue 42, item 5) and the rate limiters' shared tally,
// on the store of the backend under test: in memory (one node) or in PostgreSQL (every node on the
// database). A lapse is waited for as a condition with a deadline; the test checks it came no
// earlier than the time to live.

#include "domain/clock.hpp"
#include "storage/leases.hpp"
#include "storage/postgresql/leases.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <map>
#include <mutex>

using namespace std::chrono_literals;
using cl::storage::lease_keeper;
using cl::storage::lease_store;

namespace {

std::shared_ptr<lease_store> leases() {
  if (!cl::testing::postgresql_backend()) return cl::storage::memory_lease_store();
  cl::storage::postgresql_settings pg{cl::testing::fresh_postgresql_url(), {}, 2};
  cl::storage::open_postgresql_store(pg);  // migrates the schema
  return cl::storage::open_postgresql_leases(pg);
}

/// When `name`'s hold ends as the store recorded it (Unix ms).
std::int64_t expiry_of(lease_store& store, const std::string& name) {
  for (const auto& l : store.leases())
    if (l.name == name) return l.expires_ms;
  FAIL("no lease " << name);
  return 0;
}

}  // namespace

TEST_CASE("a lease is held by one holder until it lapses or is given up", "[leases]") {
  auto store = leases();
  // Held for a minute here, so no stall of a loaded machine lets one lapse between two checks.
  CHECK(store->claim("webhooks", "node-a", 60s));
  CHECK_FALSE(store->claim("webhooks", "node-b", 60s));
  CHECK(store->claim("webhooks", "node-a", 60s));  // renewed by its holder
  CHECK(store->claim("pruning", "node-b", 60s));   // another lease is another row
  auto listed = store->leases();
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].name == "pruning");
  CHECK(listed[0].holder == "node-b");
  CHECK(listed[1].name == "webhooks");
  CHECK(listed[1].holder == "node-a");

  SECTION("node-a stops renewing: node-b takes it once it lapsed, not before") {
    REQUIRE(store->claim("webhooks", "node-a", 600ms));  // its renewal shortens the hold to 600 ms
    auto lapses = expiry_of(*store, "webhooks");
    // Every claim of node-b before the expiry node-a's renewal recorded fails; the one that takes
    // it comes at or after it (the store's own clock, read back).
    bool taken = false;
    REQUIRE(cl::testing::eventually([&] {
      // The clock read before the claim: a claim refused must have started before the lapse (a
      // loaded machine may return it late, which says nothing about when the database decided).
      // The claim that takes it holds for a minute, so node-a's claim after it is refused however
      // late a loaded machine runs it.
      auto asked = cl::domain::now_ms();
      taken = store->claim("webhooks", "node-b", 60s);
      if (!taken) CHECK(asked < lapses + 50);
      return taken;
    }, 5000));
    CHECK(cl::domain::now_ms() >= lapses - 50);
    CHECK_FALSE(store->claim("webhooks", "node-a", 600ms));
  }

  SECTION("given up, it is free at once; another holder's release changes nothing") {
    store->release("pruning", "node-a");
    CHECK_FALSE(store->claim("pruning", "node-a", 60s));
    store->release("webhooks", "node-a");
    CHECK(store->claim("webhooks", "node-b", 60s));
  }
}

TEST_CASE("two keepers: one holds each lease, the other takes over when it stops", "[leases]") {
  auto store = leases();
  std::mutex m;
  std::condition_variable cv;
  std::map<std::string, int> gained_b;
  // 3 s to live, a claim a second: B's claim after A gives up comes at least a second before A's
  // last claims would lapse, a margin a stall of the loaded test machine does not eat.
  lease_keeper a{store, "node-a", {"webhooks", "pruning"}, 3s};
  lease_keeper b{store, "node-b", {"webhooks", "pruning"}, 3s};
  std::int64_t gained_last_ms = 0;
  b.on_gain([&](const std::string& name) {
    std::lock_guard lock{m};
    ++gained_b[name];
    gained_last_ms = cl::domain::now_ms();
    cv.notify_all();
  });
  CHECK(a.holds("webhooks"));
  CHECK(a.holds("pruning"));
  CHECK_FALSE(a.holds("edge-purge"));  // not a lease it keeps
  CHECK_FALSE(b.holds("webhooks"));
  CHECK(b.term("webhooks") == 0);
  CHECK(a.term("webhooks") != 0);

  // A stopping node gives its leases up: B takes them at its next claim (a third of the time to live).
  // Taken because A gave it up, not because it lapsed: B gains both before A's last claims expire.
  auto a_lapses = std::min(expiry_of(*store, "webhooks"), expiry_of(*store, "pruning"));
  a.stop();
  CHECK_FALSE(a.holds("webhooks"));
  {
    std::unique_lock lock{m};
    REQUIRE(cv.wait_for(lock, 5s, [&] { return gained_b["webhooks"] == 1 && gained_b["pruning"] == 1; }));
  }
  CHECK(gained_last_ms < a_lapses);
  CHECK(b.holds("webhooks"));
  CHECK(b.holds("pruning"));
  auto held = store->leases();
  REQUIRE(held.size() == 2);
  for (const auto& l : held) CHECK(l.holder == "node-b");
}

TEST_CASE("a keeper that cannot renew stops counting the lease held before it could lapse", "[leases]") {
  // A store that stops answering (the database is unreachable): the holder's hold ends by itself,
  // before the time to live from its last claim, so it never works beside the next holder.
  struct failing_store final : lease_store {
    std::shared_ptr<lease_store> inner = cl::storage::memory_lease_store();
    std::atomic<bool> down{false};
    bool claim(const std::string& n, const std::string& h, std::chrono::milliseconds ttl) override {
      if (down) throw std::runtime_error("unreachable");
      return inner->claim(n, h, ttl);
    }
    void release(const std::string& n, const std::string& h) override { inner->release(n, h); }
    std::vector<cl::storage::lease_record> leases() override { return inner->leases(); }
  };
  auto store = std::make_shared<failing_store>();
  lease_keeper a{store, "node-a", {"webhooks"}, 600ms};
  REQUIRE(a.holds("webhooks"));
  auto first = a.term("webhooks");
  auto lapses = expiry_of(*store->inner, "webhooks");
  store->down = true;
  // Let go before the last claim's expiry: never beside the next holder.
  REQUIRE(cl::testing::eventually([&] { return !a.holds("webhooks"); }, 5000));
  CHECK(cl::domain::now_ms() < lapses);
  store->down = false;
  // Back: held again under a new term (work restarts from the store).
  REQUIRE(cl::testing::eventually([&] { return a.holds("webhooks"); }, 5000));
  CHECK(a.term("webhooks") != first);
}

TEST_CASE("the rate tally: each node is told what the others admitted since it last asked", "[leases][rate]") {
  if (!cl::testing::postgresql_backend()) return;  // one node shares nothing: there is no tally on LMDB
  cl::storage::postgresql_settings pg{cl::testing::fresh_postgresql_url(), {}, 2};
  cl::storage::open_postgresql_store(pg);
  auto a = cl::storage::open_postgresql_rate_exchange(pg, "node-a");
  auto b = cl::storage::open_postgresql_rate_exchange(pg, "node-b");
  auto sum = [](const cl::storage::admissions& all, const std::string& client) {
    double n = 0;
    for (const auto& [c, k] : all)
      if (c == client) n += k;
    return n;
  };
  CHECK(a->exchange({{"app_1", 3}}).empty());  // the first call only learns where the others are
  CHECK(b->exchange({}).empty());              // B starts here: A's 3 came before it
  CHECK(a->exchange({{"app_1", 2}, {"app_2", 1}}).empty());
  auto told = b->exchange({{"app_1", 4}});
  CHECK(sum(told, "app_1") == 2);
  CHECK(sum(told, "app_2") == 1);
  CHECK(b->exchange({}).empty());  // told once
  auto back = a->exchange({});
  CHECK(sum(back, "app_1") == 4);
  CHECK(sum(back, "app_2") == 0);
}
