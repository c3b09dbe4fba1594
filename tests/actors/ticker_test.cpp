// The ticker (a supervised component doing blocking work on a timer) and the log gate, on CAF's
// deterministic scheduler: a message in, the rounds and answers out, no sockets, no waiting.

#include "actors/log_gate.hpp"
#include "actors/ticker.hpp"
#include "storage/kv/memory_store.hpp"
#include "storage/stores.hpp"

#include "tests/support/deterministic.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>

using namespace cl;
using namespace cl::actors;
using namespace std::chrono_literals;

namespace {

using cl::testing::deterministic;

}  // namespace

TEST_CASE("a ticker runs its first round at once and each next one when the previous answered", "[ticker]") {
  deterministic d;
  auto rounds = std::make_shared<int>(0);
  auto t = d.sys->spawn(ticker, "test", [rounds] {
    ++*rounds;
    return std::chrono::milliseconds{250};
  }, 1000ms);
  d.sched->run();
  CHECK(*rounds == 1);  // at once, nothing else due
  CHECK(d.sched->trigger_timeout());
  d.sched->run();
  CHECK(*rounds == 2);
  CHECK(d.sched->trigger_timeout());
  d.sched->run();
  CHECK(*rounds == 3);
  caf::anon_send_exit(t, caf::exit_reason::kill);
  d.sched->run();
}

TEST_CASE("a ticker whose round throws tries again, and goes on once a round succeeds", "[ticker]") {
  deterministic d;
  auto rounds = std::make_shared<int>(0);
  auto t = d.sys->spawn(ticker, "test", [rounds]() -> std::chrono::milliseconds {
    if (++*rounds <= 2) throw std::runtime_error("the database is away");
    return 100ms;
  }, 1000ms);
  d.sched->run();
  for (int i = 0; i < 3; ++i) {
    REQUIRE(d.sched->trigger_timeout());
    d.sched->run();
  }
  CHECK(*rounds == 4);  // two failures did not stop it
  caf::anon_send_exit(t, caf::exit_reason::kill);
  d.sched->run();
}

TEST_CASE("the log gate answers whether this node's reads reflect a position", "[ticker][position]") {
  deterministic d;
  auto store = storage::open_memory_store();
  REQUIRE(store->apply({[](storage::write_txn& tx) {
    tx.catalog().put(storage::catalog_kind::work, "t_1", "wk_1", R"({"id":"wk_1"})");
    storage::change_entry e;
    e.tenant = "t_1";
    e.kind = storage::change_kind::work;
    e.id = "wk_1";
    tx.log_change(e);
    return true;
  }})[0]);
  auto head = store->last_change();
  REQUIRE(head > 0);
  auto gate = d.sys->spawn(log_gate, store);
  caf::scoped_actor self{*d.sys};
  auto reach = [&](std::uint64_t at) {
    std::optional<bool> answer;
    auto h = self->request(gate, caf::infinite, reach_atom_v, at);
    d.sched->run();
    h.receive([&](bool reached) { answer = reached; }, [](caf::error&) { FAIL("the gate failed"); });
    return answer;
  };
  CHECK(reach(head) == std::optional<bool>{true});
  CHECK(reach(1) == std::optional<bool>{true});
  CHECK(reach(head + 1) == std::optional<bool>{false});  // past the log's head: not committed here
  caf::anon_send_exit(gate, caf::exit_reason::kill);
  d.sched->run();
}
