// Search sessions: ownership, idle expiry, the bounds that evict, and the hits a session has
// answered (issue 14), on the store of the backend under test: in memory, or in PostgreSQL where
// every node shares them (issue 42). Times are injected: no clock, no sleep. The shared store
// applies the bounds on all sessions in a sweep (its sweeper actor's, every few seconds): those
// tests sweep before they look; the memory store applies them at once (its sweep does nothing).

#include "domain/ids.hpp"
#include "domain/search_session.hpp"
#include "storage/postgresql/backend.hpp"
#include "storage/postgresql/search_sessions.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <thread>

using namespace cl::domain;

namespace {

const session_owner alice{"t_a", "u_alice", "a_app"};

session_limits small(std::size_t total, std::size_t per_principal, std::int64_t ttl_ms = 1000) {
  session_limits l;
  l.ttl_ms = ttl_ms;
  l.max_sessions = total;
  l.max_per_principal = per_principal;
  return l;
}

/// The session store of the backend under test: its own schema on the PostgreSQL test server, else
/// in memory.
std::shared_ptr<session_store> sessions(const session_limits& limits) {
  if (!cl::testing::postgresql_backend()) return std::make_shared<memory_session_store>(limits);
  cl::storage::postgresql_settings pg{cl::testing::fresh_postgresql_url(), {}, 2};
  cl::storage::open_postgresql_store(pg);  // migrates the schema
  return cl::storage::open_postgresql_sessions(pg, limits, 4);
}

search_request asking(std::string query) { return {std::move(query), {}, {}, {}, false}; }

/// A new session with no hit answered yet (as a first page that found none opens one); its id.
std::string open(session_store& store, const session_owner& owner, search_request request, std::uint64_t position,
                 std::int64_t now_ms) {
  auto id = cl::domain::random_id("srch_");
  store.opened(id, owner, std::move(request), position, {}, now_ms);
  return id;
}

}  // namespace

TEST_CASE("a session belongs to its tenant, subject and client: anyone else finds nothing", "[search][sessions]") {
  auto store = sessions(small(10, 10));
  auto id = open(*store, alice, {"tides", {"article"}, {"en", "fr"}, "wrk_1", true}, 42, 0);
  CHECK(id.rfind("srch_", 0) == 0);
  auto mine = store->find(id, alice, 10);
  REQUIRE(mine.session);
  CHECK(mine.session->request.query == "tides");
  CHECK(mine.session->request.types == std::vector<std::string>{"article"});
  CHECK(mine.session->request.languages == std::vector<std::string>{"en", "fr"});
  CHECK(mine.session->request.work_id == "wrk_1");
  CHECK(mine.session->request.usable_only);
  CHECK(mine.session->position == 42);
  for (const auto& other : {session_owner{"t_b", "u_alice", "a_app"}, session_owner{"t_a", "u_bob", "a_app"},
                            session_owner{"t_a", "u_alice", "a_other"}}) {
    auto theirs = store->find(id, other, 10);
    CHECK_FALSE(theirs.session);
    CHECK(theirs.miss == session_miss::unknown);
    // Another's hits are not recorded under it.
    CHECK(store->answered(id, other, {"res_1"}, 10) == std::vector<std::string>{"res_1"});
  }
  CHECK(store->find(id, alice, 11).session->returned.empty());
  CHECK(store->find("srch_nosuch", alice, 10).miss == session_miss::unknown);
}

TEST_CASE("a session idle past its TTL is expired for its owner, unknown for others, then forgotten", "[search][sessions]") {
  auto store = sessions(small(10, 10));
  auto id = open(*store, alice, asking("tides"), 0, 0);
  REQUIRE(store->find(id, alice, 900).session);  // use restarts the idle time
  REQUIRE(store->find(id, alice, 1800).session);
  auto gone = store->find(id, alice, 2800);
  CHECK_FALSE(gone.session);
  CHECK(gone.miss == session_miss::expired);
  CHECK(store->size() == 0);
  CHECK(store->find(id, session_owner{"t_a", "u_bob", "a_app"}, 2800).miss == session_miss::unknown);
  // An expired session records nothing: its hits are answered as new.
  CHECK(store->answered(id, alice, {"res_1"}, 2801) == std::vector<std::string>{"res_1"});
  CHECK(store->find(id, alice, 2802).miss == session_miss::expired);
  CHECK(store->find(id, alice, 1800 + 2000 + 1).miss == session_miss::unknown);  // one more TTL later
}

TEST_CASE("past the per-principal bound the owner's least recently used session goes, not another's", "[search][sessions]") {
  auto store = sessions(small(100, 2, 10000));
  session_owner bob{"t_a", "u_bob", "a_app"};
  auto bobs = open(*store, bob, asking("b"), 0, 0);
  auto first = open(*store, alice, asking("1"), 0, 1);
  auto second = open(*store, alice, asking("2"), 0, 2);
  REQUIRE(store->find(first, alice, 3).session);  // first is now the more recently used
  auto third = open(*store, alice, asking("3"), 0, 4);
  store->sweep(5);
  CHECK_FALSE(store->find(second, alice, 5005).session);
  CHECK(store->find(first, alice, 5006).session);
  CHECK(store->find(third, alice, 5006).session);
  CHECK(store->find(bobs, bob, 5006).session);
}

TEST_CASE("past the total bound the least recently used session of anyone goes", "[search][sessions]") {
  auto store = sessions(small(3, 10, 10000));
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(open(*store, session_owner{"t_a", "u_" + std::to_string(i), "a_app"}, asking("q"), 0, i));
  auto newest = open(*store, alice, asking("q"), 0, 10);
  store->sweep(11);
  CHECK_FALSE(store->find(ids[0], session_owner{"t_a", "u_0", "a_app"}, 5011).session);
  CHECK(store->size() == 3);
  CHECK(store->find(ids[1], session_owner{"t_a", "u_1", "a_app"}, 5012).session);
  CHECK(store->find(newest, alice, 5013).session);
}

TEST_CASE("a sweep that removed as many sessions as are held gives their space back", "[search][sessions]") {
  // Under load every search opens a session that a sweep soon removes: the shared store's table
  // would grow to several times its live rows before autovacuum looked (docs/benchmarks.md).
  auto store = sessions(small(10, 10, 60000));
  for (int i = 0; i < 2100; ++i) open(*store, alice, asking("q"), 0, i);
  bool shared = cl::testing::postgresql_backend();
  CHECK(store->sweep(2100) == shared);  // 2,090 removed: past 2,000 and the 10 held
  CHECK(store->size() == 10);
  for (int i = 0; i < 20; ++i) open(*store, alice, asking("q"), 0, 3000 + i);
  CHECK_FALSE(store->sweep(3100));  // 20 removed since: not yet
  CHECK(store->size() == 10);
}

TEST_CASE("a session remembers the hits it answered", "[search][sessions]") {
  auto store = sessions(small(10, 10));
  auto id = open(*store, alice, asking("tides"), 0, 0);
  CHECK(store->answered(id, alice, {}, 1).empty());
  store->answered(id, alice, {"res_1", "res_2"}, 1);
  store->answered(id, alice, {"res_3"}, 2);
  auto s = store->find(id, alice, 3).session;
  REQUIRE(s);
  CHECK(s->returned == std::unordered_set<std::string>{"res_1", "res_2", "res_3"});
}

TEST_CASE("answering a hit twice records it once, and held hits are bounded over all sessions", "[search][sessions]") {
  auto limits = small(10, 10, 10000);
  limits.max_held_hits = 4;
  auto store = sessions(limits);
  auto old = open(*store, alice, asking("tides"), 0, 0);
  CHECK(store->answered(old, alice, {"res_1", "res_2"}, 1) == std::vector<std::string>{"res_1", "res_2"});
  // A concurrent page that took res_2 too learns that only res_3 is its own; asked twice, once.
  CHECK(store->answered(old, alice, {"res_2", "res_3", "res_3"}, 2) == std::vector<std::string>{"res_3"});
  auto recent = open(*store, alice, asking("waves"), 0, 3);
  // Two more hits pass the bound: the least recently used other session goes, this one stays.
  store->answered(recent, alice, {"res_7", "res_8"}, 4);
  store->sweep(5);
  CHECK(store->find(old, alice, 5005).miss == session_miss::unknown);
  CHECK(store->find(recent, alice, 5006).session);
}

TEST_CASE("concurrent pages of one session take each hit once", "[search][sessions]") {
  auto store = sessions(small(10, 10, 60000));
  auto id = open(*store, alice, asking("tides"), 0, 0);
  std::vector<std::string> hits;
  for (int i = 0; i < 50; ++i) hits.push_back("res_" + std::to_string(i));
  // Four pages at once, each offering every hit (as four nodes ranking the same candidates would).
  std::vector<std::vector<std::string>> taken(4);
  std::vector<std::thread> pages;
  for (std::size_t p = 0; p < taken.size(); ++p)
    pages.emplace_back([&, p] { taken[p] = store->answered(id, alice, hits, 1); });
  for (auto& t : pages) t.join();
  std::multiset<std::string> all;
  for (const auto& t : taken) all.insert(t.begin(), t.end());
  CHECK(all == std::multiset<std::string>(hits.begin(), hits.end()));
}

TEST_CASE("a page's new hits are answered in the order it asked, whatever the order of those before", "[search][sessions]") {
  auto store = sessions(small(10, 10));
  auto id = open(*store, alice, asking("tides"), 0, 0);
  CHECK(store->answered(id, alice, {"res_5", "res_1"}, 1) == std::vector<std::string>{"res_5", "res_1"});
  CHECK(store->answered(id, alice, {"res_9", "res_1", "res_0", "res_5", "res_3"}, 2)
        == std::vector<std::string>{"res_9", "res_0", "res_3"});
}

TEST_CASE("sessions of a database at the first search schema keep their hits through the migration", "[search][sessions][postgresql]") {
  // A database as the first search schema left it (one row per answered hit), with a session that
  // answered two hits; then a node of this build opens it and migrates.
  auto url = cl::testing::fresh_postgresql_url();
  cl::storage::postgresql_settings pg{url, {}, 2};
  cl::storage::open_postgresql_store(pg);
  {
    cl::storage::pg::connection db{url};
    db.exec("DROP TABLE search_sessions; DELETE FROM contentlake_schema WHERE part = 'search' AND version > 1");
    db.exec(cl::storage::pg::schema_step("search", 1));
    db.exec("INSERT INTO search_sessions VALUES ('srch_old', 't_a', 'u_alice', 'a_app', 'tides', '{article}', '{en}', "
            "'', false, 7, 1000, 2); "
            "INSERT INTO search_session_hits VALUES ('srch_old', 'res_1'), ('srch_old', 'res_2')");
  }
  auto limits = small(10, 10, 60000);
  auto store = cl::storage::open_postgresql_sessions(pg, limits, 2);
  cl::storage::open_postgresql_store(pg);  // migrates
  auto found = store->find("srch_old", alice, 2000).session;
  REQUIRE(found);
  CHECK(found->request.query == "tides");
  CHECK(found->request.types == std::vector<std::string>{"article"});
  CHECK(found->position == 7);
  CHECK(found->returned == std::unordered_set<std::string>{"res_1", "res_2"});
  CHECK(store->answered("srch_old", alice, {"res_2", "res_3"}, 2001) == std::vector<std::string>{"res_3"});
  cl::storage::pg::connection db{url};
  static const cl::storage::pg::statement version{"SELECT max(version) FROM contentlake_schema WHERE part = 'search'"};
  CHECK(db.run(version, {}).integer(0, 0) == 2);
}

TEST_CASE("a session opened with its first page's hits has answered them, each once", "[search][sessions]") {
  auto store = sessions(small(10, 10));
  CHECK(store->opened("srch_first", alice, asking("tides"), 3, {"res_2", "res_1", "res_2"}, 0)
        == std::vector<std::string>{"res_2", "res_1"});
  auto s = store->find("srch_first", alice, 1).session;
  REQUIRE(s);
  CHECK(s->returned == std::unordered_set<std::string>{"res_1", "res_2"});
  CHECK(s->position == 3);
  CHECK(s->request.query == "tides");
  CHECK(store->answered("srch_first", alice, {"res_1", "res_3"}, 2) == std::vector<std::string>{"res_3"});
  CHECK_FALSE(store->find("srch_first", session_owner{"t_a", "u_bob", "a_app"}, 3).session);
}
