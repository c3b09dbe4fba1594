// Search sessions: ownership, idle expiry, the bounds that evict, and the hits a session has
// answered (issue 14). Times are injected: no clock, no sleep.

#include "domain/search_session.hpp"

#include <catch2/catch.hpp>

using namespace cl::domain;

namespace {

const session_owner alice{"t_a", "u_alice", "a_app"};

session_limits small(std::size_t total, std::size_t per_principal) {
  session_limits l;
  l.ttl_ms = 1000;
  l.max_sessions = total;
  l.max_per_principal = per_principal;
  return l;
}

}  // namespace

TEST_CASE("a session belongs to its tenant, subject and client: anyone else finds nothing", "[search]") {
  memory_session_store store{small(10, 10)};
  auto id = store.open(alice, {"tides", {}, {}, {}, false}, 0);
  CHECK(id.rfind("srch_", 0) == 0);
  auto [mine, why] = store.find(id, alice, 10);
  REQUIRE(mine);
  CHECK(mine->request.query == "tides");
  for (const auto& other : {session_owner{"t_b", "u_alice", "a_app"}, session_owner{"t_a", "u_bob", "a_app"},
                            session_owner{"t_a", "u_alice", "a_other"}}) {
    auto [s, miss] = store.find(id, other, 10);
    CHECK_FALSE(s);
    CHECK(miss == session_miss::unknown);
  }
  CHECK(store.find("srch_nosuch", alice, 10).second == session_miss::unknown);
}

TEST_CASE("a session idle past its TTL is expired for its owner, unknown for others, then forgotten", "[search]") {
  memory_session_store store{small(10, 10)};
  auto id = store.open(alice, {"tides", {}, {}, {}, false}, 0);
  REQUIRE(store.find(id, alice, 900).first);  // use restarts the idle time
  REQUIRE(store.find(id, alice, 1800).first);
  auto [s, miss] = store.find(id, alice, 2800);
  CHECK_FALSE(s);
  CHECK(miss == session_miss::expired);
  CHECK(store.size() == 0);
  CHECK(store.find(id, session_owner{"t_a", "u_bob", "a_app"}, 2800).second == session_miss::unknown);
  CHECK(store.find(id, alice, 1800 + 2000 + 1).second == session_miss::unknown);  // one more TTL later
}

TEST_CASE("past the per-principal bound the owner's least recently used session goes, not another's", "[search]") {
  memory_session_store store{small(100, 2)};
  session_owner bob{"t_a", "u_bob", "a_app"};
  auto bobs = store.open(bob, {"b", {}, {}, {}, false}, 0);
  auto first = store.open(alice, {"1", {}, {}, {}, false}, 1);
  auto second = store.open(alice, {"2", {}, {}, {}, false}, 2);
  REQUIRE(store.find(first, alice, 3).first);  // first is now the more recently used
  auto third = store.open(alice, {"3", {}, {}, {}, false}, 4);
  CHECK(store.find(first, alice, 5).first);
  CHECK_FALSE(store.find(second, alice, 5).first);
  CHECK(store.find(third, alice, 5).first);
  CHECK(store.find(bobs, bob, 5).first);
  CHECK(store.size() == 3);
}

TEST_CASE("past the total bound the least recently used session of anyone goes", "[search]") {
  memory_session_store store{small(3, 10)};
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(store.open(session_owner{"t_a", "u_" + std::to_string(i), "a_app"}, {"q", {}, {}, {}, false}, i));
  auto newest = store.open(alice, {"q", {}, {}, {}, false}, 10);
  CHECK(store.size() == 3);
  CHECK_FALSE(store.find(ids[0], session_owner{"t_a", "u_0", "a_app"}, 11).first);
  CHECK(store.find(newest, alice, 11).first);
}

TEST_CASE("a session remembers the hits it answered", "[search]") {
  memory_session_store store{small(10, 10)};
  auto id = store.open(alice, {"tides", {}, {}, {}, false}, 0);
  store.answered(id, {"res_1", "res_2"});
  store.answered(id, {"res_3"});
  auto* s = store.find(id, alice, 1).first;
  REQUIRE(s);
  CHECK(s->returned == std::unordered_set<std::string>{"res_1", "res_2", "res_3"});
}

TEST_CASE("answering a hit twice records it once, and held hits are bounded over all sessions", "[search]") {
  auto limits = small(10, 10);
  limits.max_held_hits = 4;
  memory_session_store store{limits};
  auto old = store.open(alice, {"tides", {}, {}, {}, false}, 0);
  CHECK(store.answered(old, {"res_1", "res_2"}) == std::vector<std::string>{"res_1", "res_2"});
  // A concurrent page that took res_2 too learns that only res_3 is its own.
  CHECK(store.answered(old, {"res_2", "res_3"}) == std::vector<std::string>{"res_3"});
  CHECK(store.held_hits() == 3);
  auto recent = store.open(alice, {"waves", {}, {}, {}, false}, 1);
  REQUIRE(store.find(recent, alice, 2).first);
  // Two more hits pass the bound: the least recently used other session goes, this one stays.
  store.answered(recent, {"res_7", "res_8"});
  CHECK(store.find(old, alice, 3).second == session_miss::unknown);
  CHECK(store.find(recent, alice, 3).first);
  CHECK(store.held_hits() == 2);
}
