// The access actor, on CAF's deterministic scheduler: a check in, the role and the shared cache out
// (a role kept, a denial never); a subject's groups from the directory file; a group's grant
// counting for its members. No sockets, no waiting.

#include "actors/access.hpp"
#include "domain/clock.hpp"
#include "storage/kv/memory_store.hpp"
#include "storage/stores.hpp"

#include "tests/support/deterministic.hpp"

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <unistd.h>

using namespace cl;
using namespace cl::actors;

namespace {

storage::mutation grant(const std::string& resource, const std::string& principal, domain::access_role role) {
  return [=](storage::write_txn& tx) {
    tx.grants().put("t_1", {resource, principal, role, "u_owner", "2026-01-01T00:00:00Z"});
    return true;
  };
}

struct checker : testing::deterministic {
  std::shared_ptr<access_config> config = std::make_shared<access_config>();
  std::string directory = "/tmp/contentlake-access-test-" + std::to_string(::getpid()) + ".json";
  access_actor actor;

  checker() {
    std::ofstream{directory} << R"({"version":"1","groups":[{"id":"g_eds","tenant_id":"t_1","members":["u_bob"]}]})";
    config->store = storage::open_memory_store();
    config->cache = std::make_shared<access_cache>(1000);
    config->epoch = std::make_shared<std::atomic<std::uint64_t>>(0);
    config->directory_file = directory;
    actor = sys->spawn(cl::actors::access, std::shared_ptr<const access_config>{config});
    sched->run();
  }
  ~checker() {
    kill(actor);
    std::remove(directory.c_str());
  }

  template <class Answer, class... Ts>
  Answer ask(Ts... xs) {
    return deterministic::ask<Answer>(actor, xs...);
  }

  domain::access_role role(const std::string& subject, const std::string& resource) {
    return static_cast<domain::access_role>(
      ask<std::int32_t>(check_atom_v, std::string{"t_1"}, subject, resource));
  }
};

}  // namespace

TEST_CASE("the access actor answers a subject's role from its grants and keeps roles, never denials",
          "[actors][access]") {
  checker c;
  REQUIRE(c.config->store->apply({grant("res_1", "u_alice", domain::access_role::writer)})[0]);
  auto epoch = c.config->epoch->load();
  CHECK(c.role("u_alice", "res_1") == domain::access_role::writer);
  CHECK(c.config->cache->find(access_cache_key("t_1", "res_1", "u_alice", epoch), domain::now_seconds())
        == std::optional<domain::access_role>{domain::access_role::writer});
  // No grant: none, and nothing cached (a grant made a moment later must count at once).
  CHECK(c.role("u_carol", "res_1") == domain::access_role::none);
  CHECK_FALSE(c.config->cache->find(access_cache_key("t_1", "res_1", "u_carol", epoch), domain::now_seconds()));
}

TEST_CASE("the access actor counts a group's grant for its members, from the directory file", "[actors][access]") {
  checker c;
  REQUIRE(c.config->store->apply({grant("res_2", "g_eds", domain::access_role::reader)})[0]);
  CHECK(c.role("u_bob", "res_2") == domain::access_role::reader);    // a member of g_eds
  CHECK(c.role("u_alice", "res_2") == domain::access_role::none);    // not one
  CHECK(c.ask<std::vector<std::string>>(principals_atom_v, std::string{"t_1"}, std::string{"u_bob"})
        == std::vector<std::string>{"u_bob", "g_eds"});
  CHECK(c.ask<bool>(group_atom_v, std::string{"t_1"}, std::string{"g_eds"}));
  CHECK_FALSE(c.ask<bool>(group_atom_v, std::string{"t_2"}, std::string{"g_eds"}));  // another tenant's: none
}
