// The webhook store (the webhooks group's own): endpoints by owner and the enabled index, retries
// by due time, the delivery log newest first and bounded, and erasure of an endpoint with its log.

#include "storage/record_codecs.hpp"
#include "storage/webhook_store.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

webhook_record hook(const std::string& tenant, const std::string& id, const std::string& owner, bool enabled = true) {
  webhook_record w;
  w.tenant = tenant;
  w.id = id;
  w.owner = owner;
  w.url = "https://hooks.example.com/" + id;
  w.event_types = {"work.created"};
  w.enabled = enabled;
  w.secret_sealed = "sealed";
  w.cursor = 7;
  return w;
}

webhook_retry retry(const std::string& id, const std::string& message, std::int64_t due) {
  webhook_retry r;
  r.tenant = "t1";
  r.webhook_id = id;
  r.message_id = message;
  r.body = "{}";
  r.due_ms = due;
  return r;
}

void write(record_store& store, const std::function<void(write_txn&)>& f) {
  store.apply({[&](write_txn& tx) {
    f(tx);
    return true;
  }});
}

std::vector<std::string> ids(const std::vector<webhook_record>& ws) {
  std::vector<std::string> out;
  for (const auto& w : ws) out.push_back(w.id);
  return out;
}

}  // namespace

TEST_CASE("webhooks are found by tenant and owner; the enabled index follows `enabled`", "[storage][webhooks]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto a = hook("t1", "whk_a", "u_alice"), b = hook("t1", "whk_b", "u_bob"), c = hook("t2", "whk_c", "u_alice", false);
  b.max_in_flight = 4;
  write(*store, [&](write_txn& tx) {
    for (const auto* w : {&a, &b, &c}) webhooks(tx).put(*w);
  });
  CHECK(webhooks(*store).get("t1", "whk_a") == a);
  CHECK(webhooks(*store).get("t1", "whk_b")->max_in_flight == 4);
  CHECK_FALSE(webhooks(*store).get("t2", "whk_a"));
  CHECK(ids(webhooks(*store).owned("t1", "u_alice", "", 10)) == std::vector<std::string>{"whk_a"});
  CHECK(ids(webhooks(*store).owned("t2", "u_alice", "", 10)) == std::vector<std::string>{"whk_c"});
  CHECK(ids(webhooks(*store).enabled("", 10)) == std::vector<std::string>{"whk_a", "whk_b"});
  CHECK(ids(webhooks(*store).enabled(webhook_reads::resume_key(a), 10)) == std::vector<std::string>{"whk_b"});
  a.enabled = false;
  c.enabled = true;
  write(*store, [&](write_txn& tx) {
    webhooks(tx).put(a);
    webhooks(tx).put(c);
  });
  CHECK(ids(webhooks(*store).enabled("", 10)) == std::vector<std::string>{"whk_b", "whk_c"});
}

TEST_CASE("an endpoint stored before max_in_flight existed sends one message at a time", "[storage][webhooks]") {
  auto w = decode_webhook(R"({"tenant":"t1","id":"whk_a","owner":"u_alice","url":"https://hooks.example.com/a","enabled":true})");
  CHECK(w.max_in_flight == 1);
  CHECK(w.enabled);
}

TEST_CASE("retries come due soonest first; the delivery log is newest first and keeps the latest", "[storage][webhooks]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto w = hook("t1", "whk_a", "u_alice");
  write(*store, [&](write_txn& tx) {
    webhooks(tx).put(w);
    webhooks(tx).schedule(retry("whk_a", "evt_2", 200));
    webhooks(tx).schedule(retry("whk_a", "evt_1", 100));
    webhooks(tx).schedule(retry("whk_a", "evt_3", 300));
  });
  CHECK(webhooks(*store).next_due() == std::optional<std::int64_t>{100});
  auto due = webhooks(*store).due(250, 10);
  REQUIRE(due.size() == 2);
  CHECK(due[0].message_id == "evt_1");
  CHECK(due[1].message_id == "evt_2");
  write(*store, [&](write_txn& tx) { webhooks(tx).unschedule(due[0]); });
  CHECK(webhooks(*store).next_due() == std::optional<std::int64_t>{200});

  write(*store, [&](write_txn& tx) {
    for (std::uint64_t n = 1; n <= 5; ++n) {
      webhook_delivery d;
      d.tenant = "t1";
      d.webhook_id = "whk_a";
      d.number = n;
      d.message_id = "evt_" + std::to_string(n);
      webhooks(tx).log_delivery(d, 3);  // keeps the latest 3
    }
  });
  auto log = webhooks(*store).deliveries("t1", "whk_a", 0, 10);
  std::vector<std::uint64_t> numbers;
  for (const auto& d : log) numbers.push_back(d.number);
  CHECK(numbers == std::vector<std::uint64_t>{5, 4, 3});
  auto older = webhooks(*store).deliveries("t1", "whk_a", 4, 10);
  REQUIRE(older.size() == 1);
  CHECK(older[0].number == 3);
  CHECK(webhooks(*store).deliveries("t2", "whk_a", 0, 10).empty());

  // Erasing the endpoint removes it, its indexes and its log.
  write(*store, [&](write_txn& tx) { webhooks(tx).erase("t1", "whk_a"); });
  CHECK_FALSE(webhooks(*store).get("t1", "whk_a"));
  CHECK(webhooks(*store).owned("t1", "u_alice", "", 10).empty());
  CHECK(webhooks(*store).enabled("", 10).empty());
  CHECK(webhooks(*store).deliveries("t1", "whk_a", 0, 10).empty());
}

TEST_CASE("two nodes changing one endpoint at once: neither change is lost", "[storage][webhooks][postgresql]") {
  // The dispatcher stores a batch's cursor while a request through the other node records a
  // replay: each reads the endpoint, changes its own field and puts it back.
  cl::testing::racing_stores nodes{"hook"};
  write(*nodes.a, [](write_txn& tx) { webhooks(tx).put(hook("t1", "whk_a", "u_alice")); });
  auto kept = nodes.race(
    [](write_txn& tx, const std::function<bool()>& wait) {
      auto w = webhooks(tx).get("t1", "whk_a");
      if (!wait()) return false;
      w->cursor = 9;
      webhooks(tx).put(*w);
      return true;
    },
    [](write_txn& tx) {
      auto w = webhooks(tx).get("t1", "whk_a");
      w->replay_next = w->replay_last = 3;
      webhooks(tx).put(*w);
      return true;
    });
  REQUIRE(kept == std::pair<bool, bool>{true, true});
  auto w = webhooks(*nodes.a).get("t1", "whk_a");
  CHECK(w->cursor == 9);
  CHECK(w->replay_next == 3);
}

TEST_CASE("two nodes creating an owner's last allowed endpoint at once: one is refused", "[storage][webhooks][postgresql]") {
  // POST /webhooks counts the owner's endpoints against webhooks.max_per_owner, then writes.
  cl::testing::racing_stores nodes{"cap"};
  const std::size_t cap = 2;
  write(*nodes.a, [](write_txn& tx) { webhooks(tx).put(hook("t1", "whk_0", "u_alice")); });
  auto room = [&](write_txn& tx) { return webhooks(tx).owned("t1", "u_alice", "", cap).size() < cap; };
  auto kept = nodes.race(
    [&](write_txn& tx, const std::function<bool()>& wait) {
      if (!room(tx) || !wait()) return false;
      webhooks(tx).put(hook("t1", "whk_a", "u_alice"));
      return true;
    },
    [&](write_txn& tx) {
      if (!room(tx)) return false;
      webhooks(tx).put(hook("t1", "whk_b", "u_alice"));
      return true;
    });
  CHECK(kept == std::pair<bool, bool>{true, false});
  CHECK(ids(webhooks(*nodes.a).owned("t1", "u_alice", "", 10)) == std::vector<std::string>{"whk_0", "whk_a"});
}
