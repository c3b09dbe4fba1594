// The rights resolver as an actor, on CAF's deterministic scheduler: a resolve in, the resolution
// and the shared caches out; an epoch bump after a contract changes, and the next resolution
// follows it; `possible` from the tenant's named usages. No sockets, no waiting.

#include "actors/rights.hpp"
#include "domain/clock.hpp"
#include "storage/kv/memory_store.hpp"
#include "storage/stores.hpp"

#include "tests/support/deterministic.hpp"

#include <memory>
#include <optional>

using namespace cl;
using namespace cl::actors;

namespace {

std::string contract(const std::string& id, int version, const std::string& usage_terms) {
  return R"({"id":")" + id + R"(","version":)" + std::to_string(version)
         + R"(,"status":"ACTIVE","title":"C","valid_from":"2020-01-01T00:00:00Z","work_ids":["wk_1"],)"
           R"("territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],"manifestation_rights":[],"usage_terms":[)"
         + usage_terms + R"(],"handling_terms":[]})";
}

storage::mutation put_contract(int version, const std::string& usage_terms) {
  return [=](storage::write_txn& tx) {
    tx.contracts().put_version("t_1", "ctr_a", version, "ACTIVE", {"wk_1"}, contract("ctr_a", version, usage_terms));
    return true;
  };
}

struct resolver : testing::deterministic {
  std::shared_ptr<rights_config> config = std::make_shared<rights_config>();
  rights_actor actor;

  resolver() {
    config->store = storage::open_memory_store();
    config->cache = std::make_shared<rights_cache>(1000);
    config->possible = std::make_shared<possible_cache>(1000);
    config->epoch = std::make_shared<std::atomic<std::uint64_t>>(0);
    config->current = std::make_shared<policy_holder>();
    config->builtin_policy.version = "test-1";
    actor = sys->spawn(rights, std::shared_ptr<const rights_config>{config});
    sched->run();
  }
  ~resolver() { kill(actor); }

  domain::resolved_rights resolve(const std::string& work) {
    return ask<domain::resolved_rights>(actor, resolve_atom_v, std::string{"t_1"}, work);
  }

  std::pair<bool, bool> possible(const std::string& usage) {
    caf::scoped_actor self{*sys};
    std::optional<std::pair<bool, bool>> out;
    auto h = self->request(actor, caf::infinite, possible_atom_v, std::string{"t_1"}, usage);
    sched->run();
    h.receive([&](bool allowed, bool refused) { out = {allowed, refused}; }, [](caf::error&) { FAIL("the resolver failed"); });
    REQUIRE(out);
    return *out;
  }
};

}  // namespace

TEST_CASE("the rights actor resolves a Work from its contracts and files the resolution under the epoch",
          "[actors][rights]") {
  resolver r;
  REQUIRE(r.config->store->apply({put_contract(1, R"({"usage_type":"ACCESS","status":"PERMITTED"})")})[0]);
  auto epoch = r.config->epoch->load();
  auto rights = r.resolve("wk_1");
  CHECK(rights.basis == std::vector<std::pair<std::string, std::int64_t>>{{"ctr_a", 1}});
  // The resolution is in the shared cache under this epoch: coordinators find it without asking.
  CHECK(r.config->cache->find(rights_cache_key("t_1", "wk_1", epoch), domain::now_seconds()).has_value());
  // A staged Resource (no Work) resolves with no contract.
  CHECK(r.resolve("").basis.empty());
}

TEST_CASE("the rights actor follows a new contract version once the epoch moves", "[actors][rights]") {
  resolver r;
  REQUIRE(r.config->store->apply({put_contract(1, R"({"usage_type":"ACCESS","status":"PERMITTED"})")})[0]);
  CHECK(r.resolve("wk_1").basis == std::vector<std::pair<std::string, std::int64_t>>{{"ctr_a", 1}});
  REQUIRE(r.config->store->apply({put_contract(2, R"({"usage_type":"DISPLAY","status":"PROHIBITED"})")})[0]);
  ++*r.config->epoch;  // what a contract write does after its commit
  auto now = r.resolve("wk_1");
  CHECK(now.basis == std::vector<std::pair<std::string, std::int64_t>>{{"ctr_a", 2}});
  CHECK(r.config->cache->find(rights_cache_key("t_1", "wk_1", r.config->epoch->load()), domain::now_seconds()));
}

TEST_CASE("the rights actor answers whether a use can be allowed or refused somewhere in the tenant",
          "[actors][rights]") {
  resolver r;
  CHECK(r.possible("AI_TRAINING") == std::pair<bool, bool>{false, true});  // nothing permits it
  REQUIRE(r.config->store->apply({put_contract(1, R"({"usage_type":"AI_TRAINING","status":"PERMITTED"})")})[0]);
  ++*r.config->epoch;
  auto after = r.possible("AI_TRAINING");
  CHECK(after.first);  // now some Resource's rights may allow it
}
