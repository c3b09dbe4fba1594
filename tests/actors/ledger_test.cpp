// The idempotency ledger, sharded by key (as on PostgreSQL): a key's begin and release reach the
// same shard, so a key in use is refused and a stored answer replayed exactly as with one ledger.

#include "actors/ledger.hpp"
#include "domain/clock.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

using namespace cl;
using namespace cl::actors;

namespace {

/// A store holding one stored answer under `key` (the guarded mutation's write, done here directly).
std::shared_ptr<storage::record_store> store_holding(const std::string& dir, const domain::ledger_key& key,
                                                     const std::string& fingerprint, const std::string& body) {
  auto store = cl::testing::open_store(dir);
  store->apply({[&](storage::write_txn& tx) {
    domain::ledger_record record{fingerprint, domain::now_ms(), domain::stored_answer{201, "application/json", {}, body}};
    tx.ledger().put(key, domain::now_ms(), domain::ledger_record_json(record));
    return true;
  }});
  return store;
}

/// A store holding one answer ({"a":1}, for fp_stored) under `stored`, and an actor system.
struct one_stored_answer {
  testing::temp_dir dir;
  domain::ledger_key stored{"t1", "c1", "k_stored"};
  std::shared_ptr<storage::record_store> store = store_holding(dir.path, stored, "fp_stored", "{\"a\":1}");
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
};

/// The kind of verdict `aut` answers to a begin or a check (`args`), -1 if none.
template <class... Ts>
int verdict_of(caf::scoped_actor& self, const ledger_actor& aut, Ts&&... args) {
  int kind = -1;
  self->request(aut, std::chrono::seconds{10}, std::forward<Ts>(args)...)
    .receive([&](const ledger_verdict& v) { kind = v.kind; },
             [&](caf::error& e) { FAIL(self->system().render(e)); });
  return kind;
}

}  // namespace

TEST_CASE_METHOD(one_stored_answer, "a sharded ledger holds, releases, replays and refuses each key as one ledger does",
                 "[ledger]") {
  auto config = std::make_shared<const ledger_config>(ledger_config{store, nullptr, nullptr});
  std::vector<ledger_actor> shards;
  for (int i = 0; i < 3; ++i) shards.push_back(sys.spawn<caf::detached>(ledger, config));
  auto aut = sys.spawn(ledger_shards, shards);
  caf::scoped_actor self{sys};
  auto begin = [&](const domain::ledger_key& key, const std::string& fingerprint) {
    return verdict_of(self, aut, begin_atom_v, key, fingerprint, false);
  };
  std::vector<domain::ledger_key> keys;
  for (int i = 0; i < 24; ++i) keys.push_back({"t1", "c1", "k_" + std::to_string(i)});
  for (const auto& k : keys) CHECK(begin(k, "fp") == ledger_verdict::fresh);
  for (const auto& k : keys) CHECK(begin(k, "fp") == ledger_verdict::in_use);  // held by the first
  for (const auto& k : keys) self->send(aut, release_atom_v, k, static_cast<int>(unsettled));
  for (const auto& k : keys) CHECK(begin(k, "fp") == ledger_verdict::fresh);   // released
  CHECK(begin(stored, "fp_stored") == ledger_verdict::replay);
  CHECK(begin(stored, "fp_other") == ledger_verdict::mismatch);
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}

TEST_CASE_METHOD(one_stored_answer, "begins that arrive together are each answered as if alone", "[ledger]") {
  // Every begin is sent before any answer is awaited: fresh keys are held, a key begun twice is in
  // use the second time, a stored key replays or mismatches each time it is asked, and is not held.
  auto config = std::make_shared<const ledger_config>(ledger_config{store, nullptr, nullptr});
  auto aut = sys.spawn<caf::detached>(ledger, config);
  caf::scoped_actor self{sys};
  struct ask {
    domain::ledger_key key;
    std::string fingerprint;
    int expected;
  };
  std::vector<ask> asks;
  for (int i = 0; i < 40; ++i) {
    domain::ledger_key key{"t1", "c1", "k_" + std::to_string(i)};
    asks.push_back({key, "fp", ledger_verdict::fresh});
    if (i % 10 == 0) asks.push_back({key, "fp", ledger_verdict::in_use});  // the same key again: held
    if (i % 10 == 5) asks.push_back({stored, "fp_other", ledger_verdict::mismatch});
  }
  asks.push_back({stored, "fp_stored", ledger_verdict::replay});
  asks.push_back({{"t2", "c1", "k_stored"}, "fp_stored", ledger_verdict::fresh});  // another tenant's key
  std::vector<decltype(self->request(aut, std::chrono::seconds{10}, begin_atom_v, stored, std::string{}, false))> pending;
  for (const auto& a : asks) pending.push_back(self->request(aut, std::chrono::seconds{10}, begin_atom_v, a.key, a.fingerprint, false));
  std::string replayed;
  for (std::size_t i = 0; i < asks.size(); ++i) {
    int kind = -1;
    pending[i].receive(
      [&](const ledger_verdict& v) {
        kind = v.kind;
        if (v.kind == ledger_verdict::replay) replayed = v.answer.body;
      },
      [&](caf::error& e) { FAIL(sys.render(e)); });
    INFO("ask " << i << ": " << asks[i].key.tenant << "/" << asks[i].key.key);
    CHECK(kind == asks[i].expected);
  }
  CHECK(replayed == "{\"a\":1}");
  // A replayed or mismatched key is not held: asked again, the same answer.
  CHECK(verdict_of(self, aut, begin_atom_v, stored, std::string{"fp_stored"}, false) == ledger_verdict::replay);
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}

TEST_CASE_METHOD(one_stored_answer,
                 "a ledger that trusts writes holds a key it does not remember unlooked, and looks up one it does",
                 "[ledger]") {
  // On PostgreSQL a write whose only effect is its guarded write is let run without a look-up: its
  // own ledger record is the check. A key known to have a record (stored, replayed or found) is
  // looked up from then on, so a client retrying it in a loop is answered here, not by the writer.
  ledger_config settings{store, nullptr, nullptr};
  settings.trusts_writes = true;
  settings.remembered_keys = 2;
  auto aut = sys.spawn<caf::detached>(ledger, std::make_shared<const ledger_config>(settings));
  caf::scoped_actor self{sys};
  auto ask = [&](auto atom, const domain::ledger_key& key, const std::string& fingerprint, auto... more) {
    return verdict_of(self, aut, atom, key, fingerprint, more...);
  };
  auto release = [&](const domain::ledger_key& key, int settled) { self->send(aut, release_atom_v, key, settled); };
  domain::ledger_key k1{"t1", "c1", "k1"}, k2{"t1", "c1", "k2"}, k3{"t1", "c1", "k3"};

  // Not remembered: held unlooked, even the key that has a record; held all the same.
  CHECK(ask(begin_atom_v, stored, "fp_stored", true) == ledger_verdict::unchecked);
  CHECK(ask(begin_atom_v, stored, "fp_stored", true) == ledger_verdict::in_use);
  // A check reads what is stored, and neither holds nor lets go.
  CHECK(ask(check_atom_v, stored, "fp_stored") == ledger_verdict::replay);
  CHECK(ask(check_atom_v, stored, "fp_other") == ledger_verdict::mismatch);
  CHECK(ask(check_atom_v, k1, "fp") == ledger_verdict::fresh);
  CHECK(ask(begin_atom_v, stored, "fp_stored", true) == ledger_verdict::in_use);
  // Released as replayed by its write: remembered, so looked up from now on.
  release(stored, replayed);
  CHECK(ask(begin_atom_v, stored, "fp_stored", true) == ledger_verdict::replay);
  CHECK(ask(begin_atom_v, stored, "fp_other", true) == ledger_verdict::mismatch);

  // A request with another effect is looked up whatever the ledger remembers.
  CHECK(ask(begin_atom_v, k1, "fp", false) == ledger_verdict::fresh);
  release(k1, unsettled);
  // Released with nothing stored: still not remembered.
  CHECK(ask(begin_atom_v, k1, "fp", true) == ledger_verdict::unchecked);
  release(k1, unsettled);
  CHECK(ask(begin_atom_v, k1, "fp", true) == ledger_verdict::unchecked);
  release(k1, ledger_settlement::stored);  // remembered: looked up (nothing in this store: fresh)
  CHECK(ask(begin_atom_v, k1, "fp", true) == ledger_verdict::fresh);
  release(k1, ledger_settlement::stored);
  // Two keys remembered at most, the oldest forgotten first: `stored`, then k1.
  CHECK(ask(begin_atom_v, k2, "fp", true) == ledger_verdict::unchecked);
  release(k2, ledger_settlement::stored);
  CHECK(ask(begin_atom_v, stored, "fp_stored", true) == ledger_verdict::unchecked);  // forgotten
  release(stored, unsettled);
  CHECK(ask(begin_atom_v, k1, "fp", true) == ledger_verdict::fresh);  // remembered
  release(k1, unsettled);
  CHECK(ask(begin_atom_v, k3, "fp", true) == ledger_verdict::unchecked);
  release(k3, mismatched);
  CHECK(ask(begin_atom_v, k1, "fp", true) == ledger_verdict::unchecked);  // forgotten
  CHECK(ask(begin_atom_v, k3, "fp", true) == ledger_verdict::fresh);
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}

TEST_CASE_METHOD(one_stored_answer, "a ledger that does not trust writes looks every key up", "[ledger]") {
  auto aut = sys.spawn<caf::detached>(ledger, std::make_shared<const ledger_config>(ledger_config{store, nullptr, nullptr}));
  caf::scoped_actor self{sys};
  CHECK(verdict_of(self, aut, begin_atom_v, stored, std::string{"fp_stored"}, true) == ledger_verdict::replay);
  CHECK(verdict_of(self, aut, begin_atom_v, domain::ledger_key{"t1", "c1", "k1"}, std::string{"fp"}, true)
        == ledger_verdict::fresh);
  caf::anon_send_exit(aut, caf::exit_reason::user_shutdown);
}
