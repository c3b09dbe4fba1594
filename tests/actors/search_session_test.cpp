// The search session actor, on CAF's deterministic scheduler: a page in, its candidates out (only
// what the caller's principals may read), the session opened by the record of its hits and
// continued past them, another owner's session never found, and a page that asks for a position
// the index has not applied held until it has. Over a real Xapian index in a temporary directory.

#include "actors/search/search_session.hpp"
#include "storage/kv/memory_store.hpp"

#include "tests/support/deterministic.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <unistd.h>

using namespace cl;
using namespace cl::actors;

namespace {

storage::indexed_resource doc(std::string id, std::string title, std::vector<std::string> readers) {
  return {"t_1", std::move(id), std::move(title), "ARTICLE", "en", "", "the spring tide came in", std::move(readers)};
}

std::vector<std::string> ids_of(const search_stream& s) {
  std::vector<std::string> out;
  for (const auto& h : s.hits) out.push_back(h.id);
  std::sort(out.begin(), out.end());
  return out;
}

struct sessions : testing::deterministic {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cl-search-session-test-" + std::to_string(::getpid()));
  std::shared_ptr<search_session_config> config = std::make_shared<search_session_config>();
  search_session_actor actor;
  domain::session_owner alice{"t_1", "u_alice", "a_app"};

  sessions() {
    std::filesystem::remove_all(dir);
    config->index = std::make_shared<storage::search_index>(dir, 1);
    config->index->apply({doc("res_1", "Tide one", {"u_alice"}), doc("res_2", "Tide two", {"g_eds"}),
                          doc("res_3", "Tide three", {"u_bob"})},
                         {}, 1);
    config->store = storage::open_memory_store();
    config->sessions = std::make_shared<domain::memory_session_store>(config->limits);
    actor = sys->spawn(search_session, std::shared_ptr<const search_session_config>{config});
    sched->run();
  }
  ~sessions() {
    kill(actor);
    config->index.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  search_call call(std::string search_id = {}, std::size_t candidates = 10) {
    search_call c;
    c.owner = alice;
    c.search_id = std::move(search_id);
    c.request.query = "tide";
    c.principals = {"u_alice", "g_eds"};
    c.full.candidates = candidates;
    c.budget = 4;
    return c;
  }

  template <class Answer, class... Ts>
  Answer ask(Ts... xs) {
    return deterministic::ask<Answer>(actor, xs...);
  }
};

}  // namespace

TEST_CASE("a new search ranks only what the caller's principals may read; its record opens the session, whose "
          "next page ranks past what it answered",
          "[actors][search]") {
  sessions s;
  auto first = s.ask<search_outcome>(search_atom_v, s.call({}, 1));
  REQUIRE_FALSE(first.error);
  CHECK(first.search_id.rfind("srch_", 0) == 0);
  CHECK(first.position == 1);
  REQUIRE(first.full.hits.size() == 1);
  CHECK(first.metadata.hits.empty());  // not asked for
  auto taken = first.full.hits[0].id;
  CHECK((taken == "res_1" || taken == "res_2"));
  // Not recorded yet: the session does not exist.
  auto early = s.ask<search_outcome>(search_atom_v, s.call(first.search_id));
  REQUIRE(early.error);
  CHECK(early.error->id == domain::error_id::search_session_not_found);
  session_record rec{s.alice, first.search_id, {taken}, true, first.request, first.position};
  CHECK(s.ask<std::vector<std::string>>(answered_atom_v, rec) == std::vector<std::string>{taken});
  auto next = s.ask<search_outcome>(search_atom_v, s.call(first.search_id));
  REQUIRE_FALSE(next.error);
  CHECK(next.search_id == first.search_id);
  CHECK(next.answered_before == 1);
  REQUIRE(next.full.hits.size() == 1);
  CHECK(next.full.hits[0].id != taken);
  CHECK(next.full.exhausted);
  // res_3 (u_bob's) was never a candidate; recording an answered hit again returns nothing fresh.
  rec.opens = false;
  CHECK(s.ask<std::vector<std::string>>(answered_atom_v, rec).empty());
}

TEST_CASE("another owner never finds a session, and a query the index cannot parse is refused", "[actors][search]") {
  sessions s;
  auto first = s.ask<search_outcome>(search_atom_v, s.call());
  CHECK(ids_of(first.full) == std::vector<std::string>{"res_1", "res_2"});
  s.ask<std::vector<std::string>>(answered_atom_v,
                                  session_record{s.alice, first.search_id, {"res_1"}, true, first.request, first.position});
  for (auto owner : {domain::session_owner{"t_1", "u_bob", "a_app"}, domain::session_owner{"t_2", "u_alice", "a_app"},
                     domain::session_owner{"t_1", "u_alice", "a_other"}}) {
    auto c = s.call(first.search_id);
    c.owner = owner;
    auto out = s.ask<search_outcome>(search_atom_v, c);
    REQUIRE(out.error);
    CHECK(out.error->id == domain::error_id::search_session_not_found);
  }
  auto bad = s.call();
  bad.request.query = "tide AND (";
  auto refused = s.ask<search_outcome>(search_atom_v, bad);
  REQUIRE(refused.error);
  CHECK(refused.error->id == domain::error_id::query_syntax);
}

TEST_CASE("a page asking for a position the index has not applied waits, and is answered once it has",
          "[actors][search]") {
  sessions s;
  caf::scoped_actor self{*s.sys};
  auto c = s.call();
  c.at_least = 2;  // the index applied 1
  auto h = self->request(s.actor, caf::infinite, search_atom_v, c);
  s.sched->run();
  // Held, not answered: the index has not applied 2.
  bool answered = false;
  self->receive([&](search_outcome&) { answered = true; }, caf::after(std::chrono::seconds{0}) >> [] {});
  CHECK_FALSE(answered);
  s.config->index->apply({doc("res_4", "Tide four", {"u_alice"})}, {}, 2);
  s.sched->trigger_timeouts();  // the actor's next look
  s.sched->run();
  std::optional<search_outcome> out;
  h.receive([&](search_outcome& o) { out = std::move(o); }, [](caf::error& e) { FAIL(to_string(e)); });
  REQUIRE(out);
  REQUIRE_FALSE(out->error);
  CHECK(out->position == 2);
  CHECK(ids_of(out->full) == std::vector<std::string>{"res_1", "res_2", "res_4"});
}
