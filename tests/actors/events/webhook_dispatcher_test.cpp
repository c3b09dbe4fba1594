// The webhook dispatcher, on CAF's deterministic scheduler with the writer and the access actor
// beside it: its policy and the routes' read jobs, and one whole round of a batch whose outcome
// needs no worker (an endpoint whose secret cannot be opened: every message fails as
// `secret_unreadable`), committed in one transaction: the delivery-log entry, the retry on the
// schedule, the endpoint's cursor past the batch. Deliveries over HTTP run on detached workers
// and are covered end to end (tests/client/webhooks.py, with a real receiver). No sockets.

#include "actors/access.hpp"
#include "actors/events/webhook_dispatcher.hpp"
#include "actors/writer.hpp"
#include "domain/change_cursor.hpp"
#include "storage/kv/memory_store.hpp"
#include "storage/webhook_store.hpp"

#include "tests/support/deterministic.hpp"

#include <memory>
#include <optional>

using namespace cl;
using namespace cl::actors;

namespace {

struct dispatching : testing::deterministic {
  std::shared_ptr<storage::record_store> store = storage::open_memory_store();
  std::shared_ptr<webhook_dispatcher_config> config = std::make_shared<webhook_dispatcher_config>();
  std::shared_ptr<actor_directory> directory = std::make_shared<actor_directory>(1);
  int sent = 0;
  webhook_dispatcher_actor actor;
  writer_actor writer;
  access_actor access;

  dispatching() {
    writer = sys->spawn(cl::actors::writer,
                        std::make_shared<const writer_config>(writer_config{store, std::make_shared<writer_stats>(), true}));
    auto a = std::make_shared<access_config>();
    a->store = store;
    a->cache = std::make_shared<access_cache>(100);
    a->epoch = std::make_shared<std::atomic<std::uint64_t>>(0);
    access = sys->spawn(cl::actors::access, std::shared_ptr<const access_config>{a});
    directory->publish(writer);
    directory->publish(access);
    config->store = store;
    config->directory = directory;
    config->ids = std::make_shared<const domain::feed_cursor_codec>(std::string(32, 'k'));
    config->secret_key = std::string(32, 's');
    config->policy = std::make_shared<const webhook_policy>();
    config->send = [this](const webhook_request&) {
      ++sent;  // never called here: no secret opens, so no worker is asked
      return webhook_response{200, ""};
    };
    config->schedule_ms = {5000, 60000};
  }
  ~dispatching() {
    kill(actor);
    kill(writer);
    kill(access);
  }

  void start() {
    actor = sys->spawn(webhook_dispatcher, std::shared_ptr<const webhook_dispatcher_config>{config});
    sched->run();
  }

  template <class Answer, class... Ts>
  Answer ask(Ts... xs) {
    return deterministic::ask<Answer>(actor, xs...);
  }
};

storage::mutation work_created(const std::string& id) {
  return [id](storage::write_txn& tx) {
    storage::change_entry e;
    e.tenant = "t_1";
    e.kind = storage::change_kind::work;
    e.id = id;
    e.at_ms = 1000;
    tx.log_change(e);
    return true;
  };
}

storage::webhook_record endpoint() {
  storage::webhook_record w;
  w.tenant = "t_1";
  w.id = "whk_1";
  w.owner = "u_alice";
  w.client_id = "a_app";
  w.url = "https://hooks.example.com/in";
  w.secret_sealed = "not a sealed secret";
  return w;
}

}  // namespace

TEST_CASE("the dispatcher answers its policy and runs the routes' read jobs; a failing job is a storage failure",
          "[actors][webhooks]") {
  dispatching d;
  d.start();
  CHECK(d.ask<std::shared_ptr<const webhook_policy>>(webhook_policy_atom_v) == d.config->policy);
  REQUIRE(d.store->apply({[](storage::write_txn& tx) {
    storage::webhooks(tx).put(endpoint());
    return true;
  }})[0]);
  std::optional<storage::webhook_record> seen;
  webhook_read_job job{[&seen](const storage::record_store& store, const webhook_policy&) {
    seen = storage::webhooks(store).get("t_1", "whk_1");
  }};
  CHECK(d.ask<bool>(webhook_read_atom_v, job) == true);
  REQUIRE(seen);
  CHECK(seen->url == "https://hooks.example.com/in");
  webhook_read_job failing{[](const storage::record_store&, const webhook_policy&) { throw std::runtime_error("away"); }};
  caf::scoped_actor self{*d.sys};
  std::optional<caf::error> refused;
  auto h = self->request(d.actor, caf::infinite, webhook_read_atom_v, failing);
  d.sched->run();
  h.receive([](bool) { FAIL("a failing read answered"); }, [&](caf::error& e) { refused = e; });
  REQUIRE(refused);
  CHECK(refused->category() == caf::atom("backend"));
}

TEST_CASE("a batch's outcome is one transaction: the delivery-log entry, the retry on the schedule, the cursor past "
          "the batch",
          "[actors][webhooks]") {
  dispatching d;
  REQUIRE(d.store->apply({work_created("wk_0")})[0]);  // before the endpoint: not its to deliver
  REQUIRE(d.store->apply({[](storage::write_txn& tx) {
    auto w = endpoint();
    w.cursor = 1;
    storage::webhooks(tx).put(w);
    return true;
  }})[0]);
  REQUIRE(d.store->apply({work_created("wk_1")})[0]);
  auto last = d.store->last_change();
  d.start();  // the first round reads every endpoint from its cursor
  d.sched->run();
  auto w = storage::webhooks(*d.store).get("t_1", "whk_1");
  REQUIRE(w);
  CHECK(w->cursor == last);
  CHECK(w->failing_since_ms > 0);
  auto log = storage::webhooks(*d.store).deliveries("t_1", "whk_1", 0, 10);
  REQUIRE(log.size() == 1);
  CHECK(log[0].outcome == "failed");
  CHECK(log[0].error == "secret_unreadable");
  CHECK(log[0].attempt == 1);
  CHECK(log[0].seq == last);
  auto due = storage::webhooks(*d.store).due(log[0].next_attempt_ms, 10, nullptr);
  REQUIRE(due.size() == 1);
  CHECK(due[0].message_id == log[0].message_id);
  CHECK(due[0].attempts == 1);
  // About the schedule's first delay (a tenth of jitter either way) after the attempt.
  CHECK(due[0].due_ms >= log[0].at_ms + 4500);
  CHECK(due[0].due_ms <= log[0].at_ms + 5500 + 1000);
  CHECK(d.sent == 0);
  // Nothing new: another round sends nothing and logs nothing.
  caf::anon_send(d.actor, webhook_wake_atom_v, std::uint64_t{0});
  d.sched->run();
  CHECK(storage::webhooks(*d.store).deliveries("t_1", "whk_1", 0, 10).size() == 1);
}
