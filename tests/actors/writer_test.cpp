// The writer actor batches mutations that queue up during a commit into one group commit.

#include "actors/writer.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <future>
#include <mutex>
#include <vector>

using namespace cl;
using namespace cl::actors;

TEST_CASE("mutations queued during a commit share the next group commit", "[writer]") {
  testing::temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto stats = std::make_shared<writer_stats>();
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto aut = sys.spawn<caf::detached>(writer, std::make_shared<const writer_config>(writer_config{store, stats, true}));
  caf::scoped_actor self{sys};

  // The first mutation holds the writer until every other mutation is queued behind it.
  std::promise<void> all_queued;
  auto gate = all_queued.get_future().share();
  storage::mutation first = [gate](storage::write_txn& tx) {
    gate.wait();
    tx.resources().put("t", "res_first", cl::storage::resource_header{}, "1");
    return true;
  };
  self->send(aut, write_atom_v, first);
  constexpr int n = 100;
  for (int i = 0; i < n; ++i) {
    storage::mutation m = [i](storage::write_txn& tx) {
      tx.resources().put("t", "res_" + std::to_string(i), cl::storage::resource_header{}, "x");
      tx.log_change(storage::change_entry{0, "t", storage::change_kind::resource, "res", storage::change_op::created, 1, {}, {}, {}, 0});
      return i % 10 != 0;  // every tenth refuses: only its own changes roll back
    };
    self->send(aut, write_atom_v, m);
  }
  all_queued.set_value();
  int kept = 0, refused = 0;
  for (int i = 0; i < n + 1; ++i)
    self->receive([&](bool k) { (k ? kept : refused) += 1; },
                  [&](caf::error& e) { FAIL("write failed: " << sys.render(e)); });
  CHECK(kept == n + 1 - n / 10);
  CHECK(refused == n / 10);
  CHECK(stats->mutations == static_cast<std::uint64_t>(n + 1));
  // Everything queued while the first commit was held shares one commit: one or two groups in all.
  CHECK(stats->groups >= 1);
  CHECK(stats->groups <= 2);
  CHECK(store->get_resource("t", "res_first"));
  CHECK(store->get_resource("t", "res_1"));
  CHECK_FALSE(store->get_resource("t", "res_10"));
  CHECK(store->last_change() == static_cast<std::uint64_t>(n - n / 10));
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}

TEST_CASE("without group commit every mutation is its own transaction", "[writer]") {
  testing::temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto stats = std::make_shared<writer_stats>();
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto aut = sys.spawn<caf::detached>(writer, std::make_shared<const writer_config>(writer_config{store, stats, false}));
  caf::scoped_actor self{sys};
  for (int i = 0; i < 20; ++i) {
    storage::mutation m = [i](storage::write_txn& tx) {
      tx.catalog().put(cl::storage::catalog_kind::work, "t", "wk_" + std::to_string(i), "w");
      return true;
    };
    self->send(aut, write_atom_v, m);
  }
  for (int i = 0; i < 20; ++i) self->receive([](bool kept) { CHECK(kept); }, [](caf::error&) { FAIL("write failed"); });
  CHECK(stats->groups == 20);
  CHECK(stats->mutations == 20);
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}

namespace {

/// A mutation that logs a Work and notes, in `ran`, that it ran.
storage::mutation noted(std::mutex& m, std::vector<int>& ran, int i) {
  return [&m, &ran, i](storage::write_txn& tx) {
    {
      std::lock_guard<std::mutex> guard{m};
      ran.push_back(i);
    }
    auto id = "wk_" + std::to_string(1000 + i);
    tx.catalog().put(cl::storage::catalog_kind::work, "t", id, "w");
    tx.log_change(storage::change_entry{0, "t", storage::change_kind::work, id, storage::change_op::created, 1, {}, {}, {}, 0});
    return true;
  };
}

}  // namespace

TEST_CASE("writer lanes keep one sender's writes in the order sent, and run different senders' at once",
          "[writer][postgresql]") {
  testing::temp_dir dir;  // used only when run by hand on LMDB: ctest runs this case on PostgreSQL
  auto store = cl::testing::open_store(dir.path);
  auto stats = std::make_shared<writer_stats>();
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  writer_config settings{store, stats, true};
  settings.prunes = false;  // the entries here are stamped at 1 ms past the epoch: long past retention
  auto config = std::make_shared<const writer_config>(settings);
  std::vector<writer_actor> lanes;
  for (int i = 0; i < 3; ++i) lanes.push_back(sys.spawn<caf::detached>(writer, config));
  auto aut = sys.spawn(writer_lanes, lanes);

  // One sender, 60 writes without waiting: run, answered and logged in the order sent.
  std::mutex m;
  std::vector<int> ran;
  {
    caf::scoped_actor self{sys};
    for (int i = 0; i < 60; ++i) self->send(aut, write_atom_v, noted(m, ran, i));
    for (int i = 0; i < 60; ++i) self->receive([](bool kept) { CHECK(kept); }, [](caf::error&) { FAIL("write failed"); });
  }
  std::vector<int> in_order(60);
  for (int i = 0; i < 60; ++i) in_order[i] = i;
  CHECK(ran == in_order);
  auto logged = store->read_from(0, 100);
  REQUIRE(logged.size() == 60);
  for (int i = 0; i < 60; ++i) CHECK(logged[i].id == "wk_" + std::to_string(1000 + i));

  // Two senders: the first one's write waits inside its transaction until the second one's runs,
  // which only another lane can do (one lane commits one group at a time).
  std::promise<void> second_ran;
  auto second_started = second_ran.get_future().share();
  storage::mutation waits = [second_started](storage::write_txn& tx) {
    if (second_started.wait_for(std::chrono::seconds{20}) != std::future_status::ready) return false;
    tx.catalog().put(cl::storage::catalog_kind::work, "t", "wk_first", "w");
    return true;
  };
  auto signal = std::make_shared<std::promise<void>>(std::move(second_ran));
  storage::mutation second = [signal](storage::write_txn& tx) {
    signal->set_value();
    tx.catalog().put(cl::storage::catalog_kind::work, "t", "wk_second", "w");
    return true;
  };
  caf::scoped_actor a{sys}, b{sys};
  REQUIRE(a->id() % 3 != b->id() % 3);  // lanes by sender
  a->send(aut, write_atom_v, waits);
  b->send(aut, write_atom_v, second);
  b->receive([](bool kept) { CHECK(kept); }, [](caf::error&) { FAIL("write failed"); });
  a->receive([](bool kept) { CHECK(kept); }, [](caf::error&) { FAIL("write failed"); });
  CHECK(store->catalog().get(cl::storage::catalog_kind::work, "t", "wk_first"));
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}

TEST_CASE("of several writer lanes the pruning one prunes the change log on its own timer, when every write goes "
          "to another lane", "[writer]") {
  testing::temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto stats = std::make_shared<writer_stats>();
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  writer_config settings{store, stats, true};
  settings.change_log_retention = std::chrono::milliseconds{1};  // every entry here is past it
  settings.change_log_prune_interval = std::chrono::milliseconds{20};
  auto quiet = settings;
  quiet.prunes = false;
  std::vector<writer_actor> lanes{sys.spawn<caf::detached>(writer, std::make_shared<const writer_config>(settings)),
                                  sys.spawn<caf::detached>(writer, std::make_shared<const writer_config>(quiet))};
  auto aut = sys.spawn(writer_lanes, lanes);
  // A sender whose writes all go to the second lane (lanes by sender id), as a client's creates can.
  std::vector<std::unique_ptr<caf::scoped_actor>> senders;
  while (senders.empty() || (*senders.back())->id() % 2 != 1) senders.push_back(std::make_unique<caf::scoped_actor>(sys));
  auto& self = *senders.back();
  std::mutex m;
  std::vector<int> ran;
  for (int i = 0; i < 10; ++i) {
    self->send(aut, write_atom_v, noted(m, ran, i));
    self->receive([](bool kept) { CHECK(kept); }, [](caf::error&) { FAIL("write failed"); });
  }
  // Pruning keeps the newest entry (the feed's position) and removes the rest.
  CHECK(testing::eventually([&] { return store->read_from(0, 100).size() == 1; }));
  auto left = store->read_from(0, 100);
  REQUIRE(left.size() == 1);
  CHECK(left.front().id == "wk_1009");
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}
