// Several nodes on one PostgreSQL database (issue 42), in one process: two services started on the
// same records and the same secrets file, each with its own data dir (its own search index). What
// one node hands out, another continues.

#include "domain/change_cursor.hpp"
#include "storage/identity.hpp"
#include "storage/postgresql/connection.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"
#include "tests/e2e/two_nodes.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <functional>
#include <regex>
#include <future>
#include <set>
#include <vector>

using namespace cl::testing;
namespace json = boost::json;

namespace {

std::string chapter(const std::string& title, const std::string& text) {
  return R"({"title":")" + title + R"(","type":"CHAPTER","language":"en","content":{"format":"cl.content/1",)"
         R"("blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":")" + text + R"("}]}]}})";
}

std::vector<std::string> hit_ids(const http_response& r) {
  std::vector<std::string> ids;
  auto body = json::parse(r.body);
  for (const auto& h : body.at("hits").as_array()) ids.emplace_back(h.at("id").as_string());
  return ids;
}

}  // namespace

TEST_CASE("a search session opened on one node continues on the other: no hit twice, none skipped",
          "[postgresql][nodes][search]") {
  two_nodes nodes;
  auto token = token_with("content-lake.read content-lake.write");
  std::set<std::string> written;
  for (int i = 0; i < 9; ++i) {
    auto r = post_json(nodes.a.port(), "/v0/content-lake/resources", token, chapter("Kelp " + std::to_string(i), "kelp forest"));
    REQUIRE(r);
    REQUIRE(r->status == 201);
    written.insert(std::string{json::parse(r->body).at("id").as_string()});
  }
  auto search = [&](unsigned short port, const std::string& body) {
    return post_json(port, "/v0/content-lake/search", token, body);
  };
  // Both indexes follow the shared change log.
  for (auto port : {nodes.a.port(), nodes.b.port()})
    REQUIRE(eventually([&] {
      auto r = search(port, R"({"query":"kelp","page_size":100})");
      return r && r->status == 200 && hit_ids(*r).size() == written.size();
    }));

  SECTION("pages taken in turn") {
    auto first = search(nodes.a.port(), R"({"query":"kelp","page_size":2})");
    REQUIRE(first);
    REQUIRE(first->status == 200);
    std::string sid{json::parse(first->body).at("search_id").as_string()};
    std::multiset<std::string> seen;
    for (auto& id : hit_ids(*first)) seen.insert(id);
    for (int page = 0; page < 6; ++page) {
      auto port = page % 2 == 0 ? nodes.b.port() : nodes.a.port();
      auto next = search(port, R"({"search_id":")" + sid + R"(","page_size":2})");
      REQUIRE(next);
      REQUIRE(next->status == 200);
      for (auto& id : hit_ids(*next)) seen.insert(id);
    }
    CHECK(seen == std::multiset<std::string>(written.begin(), written.end()));
  }

  SECTION("pages asked of both nodes at once") {
    auto first = search(nodes.a.port(), R"({"query":"kelp","page_size":1})");
    REQUIRE(first);
    std::string sid{json::parse(first->body).at("search_id").as_string()};
    std::multiset<std::string> seen;
    for (auto& id : hit_ids(*first)) seen.insert(id);
    for (int round = 0; round < 3; ++round) {
      std::vector<std::future<std::optional<http_response>>> pages;
      for (auto port : {nodes.a.port(), nodes.b.port(), nodes.a.port(), nodes.b.port()})
        pages.push_back(std::async(std::launch::async, [&, port] {
          return search(port, R"({"search_id":")" + sid + R"(","page_size":1})");
        }));
      for (auto& p : pages) {
        auto r = p.get();
        REQUIRE(r);
        REQUIRE(r->status == 200);
        for (auto& id : hit_ids(*r)) seen.insert(id);
      }
    }
    // Concurrent pages rank the same candidates: one page takes each, the others answer fewer. The
    // rest follows, in turn, until the session is exhausted: each hit answered once, on either node.
    for (int page = 0; page < 20; ++page) {
      auto next = search(page % 2 ? nodes.a.port() : nodes.b.port(), R"({"search_id":")" + sid + R"(","page_size":1})");
      REQUIRE(next);
      REQUIRE(next->status == 200);
      for (auto& id : hit_ids(*next)) seen.insert(id);
      if (json::parse(next->body).at("exhausted").as_bool()) break;
    }
    CHECK(seen == std::multiset<std::string>(written.begin(), written.end()));
  }

  SECTION("another caller's search id is unknown on either node") {
    auto first = search(nodes.a.port(), R"({"query":"kelp","page_size":1})");
    REQUIRE(first);
    std::string sid{json::parse(first->body).at("search_id").as_string()};
    auto bob = token_with("content-lake.read", "t_test", "u_bob");
    for (auto port : {nodes.a.port(), nodes.b.port()}) {
      auto r = post_json(port, "/v0/content-lake/search", bob, R"({"search_id":")" + sid + R"("})");
      REQUIRE(r);
      CHECK(r->status == 404);
      CHECK(r->body.find("SEARCH_SESSION_NOT_FOUND") != std::string::npos);
    }
  }
}

TEST_CASE("each node's index holds the change log for itself; a node gone past retention is let go and rebuilds",
          "[postgresql][nodes][search]") {
  // Retention 0: the log keeps only what a registered index has not applied.
  temp_dir dir, b_dir;
  auto secrets = dir.path + "/cluster.secrets";
  cl::storage::write_secrets_file(secrets);
  auto node = [&](cl::config::settings& s) {
    s.secrets_file = secrets;
    s.rate_limit.burst = 100000;
    s.storage.change_log_retention_seconds = 0;
    set_option(s, "search.batch_interval_ms", "20");
  };
  test_service a{node};
  auto start_b = [&] {
    return std::make_unique<test_service>([&](cl::config::settings& s) {
      node(s);
      s.groups.get<cl::storage::postgresql_section>().url = a.postgresql_url();
      s.data_dir = b_dir.path;
    });
  };
  auto b = start_b();
  cl::storage::pg::connection db{a.postgresql_url()};
  auto consumers = [&] {
    std::set<std::string> names;
    auto r = db.run({"SELECT name FROM change_consumers"});
    for (std::size_t i = 0; i < r.size(); ++i) names.insert(r.str(i, 0));
    return names;
  };
  std::string b_name;
  std::getline(std::ifstream{b_dir.path + "/node-name"}, b_name);
  REQUIRE_FALSE(b_name.empty());
  std::string a_consumer;
  for (const auto& n : consumers())
    if (n != "search-index@" + b_name) a_consumer = n;
  CHECK(consumers() == std::set<std::string>{a_consumer, "search-index@" + b_name});
  CHECK(a_consumer.rfind("search-index@", 0) == 0);

  auto token = token_with("content-lake.read content-lake.write");
  auto write = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto r = post_json(a.port(), "/v0/content-lake/resources", token, chapter("Kelp", "kelp forest"));
      REQUIRE(r);
      REQUIRE(r->status == 201);
    }
  };
  auto found = [&](unsigned short port, std::size_t n) {
    return eventually([&] {
      auto r = post_json(port, "/v0/content-lake/search", token, R"({"query":"kelp","page_size":100})");
      return r && r->status == 200 && hit_ids(*r).size() == n;
    });
  };
  write(3);
  REQUIRE(found(b->port(), 3));
  REQUIRE(b->stop_and_wait() == 0);
  auto stopped_at = db.run({"SELECT max(seq) FROM change_log"}).integer(0, 0);
  write(3);  // while B is away: its index holds them in the log
  CHECK(db.run({"SELECT min(seq) FROM change_log"}).integer(0, 0) <= stopped_at + 1);

  // B has not said where its index is for longer than the lapse: A lets it go, and the log moves on.
  db.run({"UPDATE change_consumers SET acknowledged_ms = 0 WHERE name = 'search-index@' || $1"}, {b_name});
  REQUIRE(eventually([&] { return consumers() == std::set<std::string>{a_consumer}; }));
  REQUIRE(eventually([&] {
    write(1);
    return db.run({"SELECT min(seq) FROM change_log"}).integer(0, 0) > stopped_at + 1;
  }));
  auto written = static_cast<std::size_t>(db.run({"SELECT count(*) FROM resources"}).integer(0, 0));

  // Back, B finds the log trimmed past its index and rebuilds it from the records: everything,
  // also what was written while it was away, is found on B. (The stopped B goes first: a data dir
  // serves one service at a time.)
  b.reset();
  b = start_b();
  CHECK(found(b->port(), written));
  CHECK(consumers() == std::set<std::string>{a_consumer, "search-index@" + b_name});
}

TEST_CASE("a grant removed on one node stops reads on the other; a write on one wakes a long poll on the other",
          "[postgresql][nodes]") {
  two_nodes nodes;
  auto alice = token_with("content-lake.read content-lake.write", "t_test", "u_alice");
  auto bob = token_with("content-lake.read", "t_test", "u_bob");
  auto created = post_json(nodes.a.port(), "/v0/content-lake/resources", alice, chapter("Kelp", "kelp forest"));
  REQUIRE(created);
  REQUIRE(created->status == 201);
  std::string id{json::parse(created->body).at("id").as_string()};
  auto path = "/v0/content-lake/resources/" + id;
  auto access = [&](const std::string& method, const std::string& body) {
    auto r = http_request(nodes.a.port(), method, path + "/access/u_bob",
                          {{"Authorization", "Bearer " + alice}, {"Content-Type", "application/json"}}, body);
    REQUIRE(r);
    return r->status;
  };
  REQUIRE(access("PUT", R"({"role":"reader"})") / 100 == 2);
  // Bob reads on B: B caches his role.
  REQUIRE(eventually([&] { return get_with_token(nodes.b.port(), path, bob)->status == 200; }));
  REQUIRE(get_with_token(nodes.b.port(), path, bob)->status == 200);
  REQUIRE(access("DELETE", "") == 204);
  // B learns it from the change log (its follower), not from a cache entry's age.
  CHECK(eventually([&] { return get_with_token(nodes.b.port(), path, bob)->status == 403; }, 2000));

  // A long poll on B answers a change committed on A.
  auto feed = get_with_token(nodes.b.port(), "/v0/content-lake/changes", alice);
  REQUIRE(feed);
  REQUIRE(feed->status == 200);
  std::string cursor{json::parse(feed->body).at("next_cursor").as_string()};
  auto waiting = std::async(std::launch::async, [&] {
    return get_with_token(nodes.b.port(), "/v0/content-lake/changes?wait=20&since=" + cursor, alice);
  });
  REQUIRE(post_json(nodes.a.port(), "/v0/content-lake/resources", alice, chapter("Kelp 2", "kelp"))->status == 201);
  auto woken = waiting.get();
  REQUIRE(woken);
  REQUIRE(woken->status == 200);
  // Woken by the change: a poll that ran its 20 s out would answer no event.
  CHECK(json::parse(woken->body).at("events").as_array().size() == 1);
}

TEST_CASE("a node whose follower is stalled past the bound reads grants and contracts from the database",
          "[postgresql][nodes]") {
  // B reads the change log once a minute: past storage.postgresql.max_lag_ms (250 ms) it trusts
  // none of its caches, so a grant revoked or a contract changed on A applies to B's next request.
  two_nodes nodes{[](cl::config::settings& s) { s.groups.get<cl::storage::postgresql_section>().follow_interval_ms = 60000; }};
  auto alice = token_with("content-lake.read content-lake.write contracts.read contracts.write", "t_test", "u_alice");
  auto bob = token_with("content-lake.read", "t_test", "u_bob");
  auto work = post_json(nodes.a.port(), "/v0/content-lake/works", alice, R"({"title":"Tides"})");
  REQUIRE(work);
  std::string work_id{json::parse(work->body).at("id").as_string()};
  auto created = post_json(nodes.a.port(), "/v0/content-lake/resources", alice,
                           R"({"title":"Kelp","type":"CHAPTER","language":"en","work_id":")" + work_id
                             + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
                               R"("children":[{"type":"span","text":"kelp forest"}]}]}})");
  REQUIRE(created);
  REQUIRE(created->status == 201);
  auto path = "/v0/content-lake/resources/" + std::string{json::parse(created->body).at("id").as_string()};
  auto contract = post_json(nodes.a.port(), "/v0/contracts", alice,
                            R"({"title":"Rights","status":"ACTIVE","valid_from":"2020-01-01T00:00:00Z","work_ids":[")"
                              + work_id + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],)"
                                R"("usage_terms":[{"usage_type":"ACCESS","status":"PERMITTED"}]})");
  REQUIRE(contract);
  REQUIRE(contract->status == 201);
  auto grant = http_request(nodes.a.port(), "PUT", path + "/access/u_bob",
                            {{"Authorization", "Bearer " + alice}, {"Content-Type", "application/json"}},
                            R"({"role":"reader"})");
  REQUIRE(grant);
  REQUIRE(grant->status / 100 == 2);
  // B's lag passes the bound and shows on its /metrics.
  REQUIRE(eventually([&] { return metric(nodes.b.admin_port(), "contentlake_change_log_lag_seconds") > 0.25; }, 5000));

  // Bob and Alice read on B while other readers keep B busy (its caches fill, and are not used).
  std::atomic<bool> stop{false};
  std::atomic<int> load_reads{0};
  auto load = std::async(std::launch::async, [&] {
    while (!stop) {
      auto r = get_with_token(nodes.b.port(), path, alice);
      if (r && r->status == 200) ++load_reads;
    }
  });
  for (int i = 0; i < 3; ++i) {
    REQUIRE(get_with_token(nodes.b.port(), path, bob)->status == 200);
    REQUIRE(get_with_token(nodes.b.port(), path, alice)->status == 200);
  }
  auto revoked = http_request(nodes.a.port(), "DELETE", path + "/access/u_bob", {{"Authorization", "Bearer " + alice}});
  REQUIRE(revoked);
  REQUIRE(revoked->status == 204);
  // The next request on B refuses Bob: no waiting for B's follower.
  auto after = get_with_token(nodes.b.port(), path, bob);
  REQUIRE(after);
  CHECK(after->status == 403);
  // A contract that now prohibits ACCESS: B's next read refuses the content (layer 3).
  auto next = post_json(nodes.a.port(), "/v0/contracts/" + std::string{json::parse(contract->body).at("id").as_string()}
                                          + "/versions",
                        alice,
                        R"({"title":"Rights","status":"ACTIVE","valid_from":"2020-01-01T00:00:00Z","work_ids":[")"
                          + work_id + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],)"
                            R"("usage_terms":[{"usage_type":"ACCESS","status":"PROHIBITED"}],"update_token":")"
                          + std::string{json::parse(contract->body).at("update_token").as_string()} + "\"}");
  REQUIRE(next);
  REQUIRE(next->status == 201);
  auto prohibited = get_with_token(nodes.b.port(), path, alice);
  REQUIRE(prohibited);
  CHECK(prohibited->status == 403);
  stop = true;
  load.get();
  CHECK(load_reads > 0);
}

TEST_CASE("held requests are limited across nodes: per principal and per client, even opened at once on both",
          "[postgresql][nodes][held]") {
  two_nodes nodes{{}, [](cl::config::settings& s) {
    set_option(s, "changes.max_held_per_principal", "4");
    set_option(s, "changes.max_held_per_client", "6");
  }};
  auto token_of = [](const std::string& sub) { return token_with("content-lake.read", "t_test", sub); };
  // A long poll that waits is held; a refused one answers 429 at once.
  auto open = [&](unsigned short port, const std::string& token) {
    auto c = std::make_unique<connection>(port, 20000);
    c->send("GET /v0/content-lake/changes?wait=6 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n\r\n");
    return c;
  };
  auto answers = [](std::vector<std::unique_ptr<connection>>& held) {
    std::map<int, int> by_status;
    for (auto& c : held) {
      auto r = c->read_response();
      REQUIRE(r);
      ++by_status[r->status];
    }
    return by_status;
  };
  // Ten of alice's at the same moment, five to each node: four are held, six refused.
  {
    std::vector<std::unique_ptr<connection>> held;
    auto alice = token_of("u_alice");
    for (int i = 0; i < 10; ++i) held.push_back(open(i % 2 ? nodes.b.port() : nodes.a.port(), alice));
    auto by_status = answers(held);
    CHECK(by_status[200] == 4);
    CHECK(by_status[429] == 6);
  }
  // The client's limit across principals and nodes: three principals of one client, two each on A
  // then one each on B: six held (the client's limit), the seventh refused on either node.
  {
    std::vector<std::unique_ptr<connection>> held;
    for (const char* sub : {"u_p1", "u_p2", "u_p3"}) {
      held.push_back(open(nodes.a.port(), token_of(sub)));
      held.push_back(open(nodes.b.port(), token_of(sub)));
    }
    REQUIRE(eventually([&] {
      return metric(nodes.a.admin_port(), "contentlake_changes_held_requests")
               + metric(nodes.b.admin_port(), "contentlake_changes_held_requests") == 6.0;
    }));
    for (auto port : {nodes.a.port(), nodes.b.port()}) {
      auto r = get_with_token(port, "/v0/content-lake/changes?wait=6", token_of("u_p4"));
      REQUIRE(r);
      CHECK(r->status == 429);
      CHECK(reason_of(*r) == "TOO_MANY_HELD_REQUESTS");
      CHECK(r->body.find("client_id") != std::string::npos);
    }
    // One closed on A frees the client's slot for a request on B within moments (A gives it back in
    // the database without holding up the connection that closed).
    held.front().reset();
    held.erase(held.begin());
    CHECK(eventually(
      [&] {
        auto r = get_with_token(nodes.b.port(), "/v0/content-lake/changes?wait=1", token_of("u_p4"));
        return r && r->status == 200;
      },
      5000));
    auto by_status = answers(held);
    CHECK(by_status[200] == 5);
  }
}

TEST_CASE("a contract changed on one node changes the rights the other answers with", "[postgresql][nodes]") {
  two_nodes nodes;
  auto token = token_with("content-lake.read content-lake.write contracts.read contracts.write");
  auto work = post_json(nodes.a.port(), "/v0/content-lake/works", token, R"({"title":"Tides"})");
  REQUIRE(work);
  REQUIRE(work->status == 201);
  std::string work_id{json::parse(work->body).at("id").as_string()};
  auto created = post_json(nodes.a.port(), "/v0/content-lake/resources", token,
                           R"({"title":"Spring tides","type":"CHAPTER","language":"en","work_id":")" + work_id
                             + R"(","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
                               R"("children":[{"type":"span","text":"Seven metres."}]}]}})");
  REQUIRE(created);
  REQUIRE(created->status == 201);
  auto path = "/v0/content-lake/resources/" + std::string{json::parse(created->body).at("id").as_string()};
  auto contract = [&](const std::string& access, const std::string& extra) {
    return R"({"title":"Digital rights","status":"ACTIVE","valid_from":"2020-01-01T00:00:00Z","work_ids":[")" + work_id
           + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],"usage_terms":[{"usage_type":"ACCESS",)"
             R"("status":")" + access + R"("}])" + extra + "}";
  };
  auto first = post_json(nodes.a.port(), "/v0/contracts", token, contract("PERMITTED", ""));
  REQUIRE(first);
  REQUIRE(first->status == 201);
  // A read of the content: 200 while ACCESS is permitted, 403 once it is prohibited (layer 3).
  auto read = [&](unsigned short port) {
    auto r = get_with_token(port, path, token);
    REQUIRE(r);
    return r->status;
  };
  // B resolves (and caches) rights that permit ACCESS.
  REQUIRE(eventually([&] { return read(nodes.b.port()) == 200; }));
  REQUIRE(read(nodes.b.port()) == 200);
  auto next = post_json(nodes.a.port(), "/v0/contracts/" + std::string{json::parse(first->body).at("id").as_string()} + "/versions",
                        token, contract("PROHIBITED", R"(,"update_token":")"
                                                        + std::string{json::parse(first->body).at("update_token").as_string()} + "\""));
  REQUIRE(next);
  REQUIRE(next->status == 201);
  CHECK(read(nodes.a.port()) == 403);
  // B refuses once its follower has read the contract's change (100 ms). (A cached resolution also
  // ages out within a second, so this bound alone does not tell the two apart; the grant test does.)
  CHECK(eventually([&] { return read(nodes.b.port()) == 403; }, 2000));
}

namespace {

/// `method target` with the caller's token and, when not empty, a position sent back.
std::optional<http_response> at_position(unsigned short port, const std::string& method, const std::string& target,
                                         const std::string& token, const std::string& position,
                                         const std::string& body = {}) {
  std::vector<std::pair<std::string, std::string>> headers{{"Authorization", "Bearer " + token}};
  if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
  if (!position.empty()) headers.emplace_back("Content-Lake-Position", position);
  return http_request(port, method, target, headers, body);
}

}  // namespace

TEST_CASE("a write answers with its change-log position; a request that sends it back is answered at or past it",
          "[nodes][position]") {
  test_service svc{[](cl::config::settings& s) { s.rate_limit.burst = 100000; }};
  auto token = token_with("content-lake.read content-lake.write");
  auto created = post_json(svc.port(), "/v0/content-lake/resources", token, chapter("Kelp", "kelp forest"));
  REQUIRE(created);
  REQUIRE(created->status == 201);
  auto position = created->header("content-lake-position");
  REQUIRE_FALSE(position.empty());
  // Sealed: the log's sequence is global, and a readable one would tell a tenant how much others write.
  CHECK_FALSE(std::regex_search(position, std::regex{"^p?[0-9]+$"}));
  auto path = "/v0/content-lake/resources/" + std::string{json::parse(created->body).at("id").as_string()};
  auto read = at_position(svc.port(), "GET", path, token, position);
  REQUIRE(read);
  CHECK(read->status == 200);
  CHECK(at_position(svc.port(), "GET", "/v0/content-lake/resources", token, position)->status == 200);
  // It is a change-feed cursor too: the feed follows from it; and a feed's cursor, filtered or not,
  // works as a position (docs/api.md "Read your writes").
  auto feed = get_with_token(svc.port(), "/v0/content-lake/changes?since=" + position, token);
  REQUIRE(feed);
  CHECK(feed->status == 200);
  auto filtered = get_with_token(svc.port(), "/v0/content-lake/changes?types=work.created", token);
  REQUIRE(filtered);
  REQUIRE(filtered->status == 200);
  for (const auto& answer : {*feed, *filtered}) {
    std::string cursor{json::parse(answer.body).at("next_cursor").as_string()};
    auto r = at_position(svc.port(), "GET", path, token, cursor);
    REQUIRE(r);
    CHECK(r->status == 200);
  }
  CHECK(at_position(svc.port(), "POST", "/v0/content-lake/search", token, position, R"({"query":"kelp"})")->status == 200);
  // Reads answer no position; a refused write neither.
  CHECK(read->header("content-lake-position").empty());
  auto refused = post_json(svc.port(), "/v0/content-lake/resources", token, R"({"title":""})");
  REQUIRE(refused);
  CHECK(refused->status == 400);
  CHECK(refused->header("content-lake-position").empty());

  // Another tenant's position does not open here either.
  auto eve = token_with("content-lake.read content-lake.write", "t_other", "u_eve");
  auto theirs = post_json(svc.port(), "/v0/content-lake/resources", eve, chapter("Theirs", "kelp"));
  REQUIRE(theirs);
  REQUIRE(theirs->status == 201);
  auto altered = position;
  altered[altered.size() / 2] = altered[altered.size() / 2] == 'A' ? 'B' : 'A';
  for (const std::string& bad : {std::string{"42"}, std::string{"p1"}, altered, theirs->header("content-lake-position")}) {
    auto r = at_position(svc.port(), "GET", path, token, bad);
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(reason_of(*r) == "POSITION_INVALID");
  }
  // A position past everything committed (sealed with this deployment's secrets, so only after a
  // restore of an older database): 503, retry later or drop it.
  auto ahead = cl::storage::feed_codec(cl::storage::secret_place{svc.data_dir()}, svc.service().store().deployment_id())
                 ->seal({"t_test", cl::domain::feed_binding_any(), 9000000000});
  for (const std::string method : {"GET", "POST"}) {
    auto r = at_position(svc.port(), method, method == "GET" ? path : "/v0/content-lake/search", token, ahead,
                         method == "GET" ? "" : R"({"query":"kelp"})");
    REQUIRE(r);
    CHECK(r->status == 503);
    CHECK(reason_of(*r) == "POSITION_NOT_REACHED");
    CHECK(r->header("retry-after") == "1");
  }
}

TEST_CASE("a position or cursor of another deployment with the same secrets is refused, not read as ours",
          "[nodes][position]") {
  // Two deployments (each its own records: its own data dir, or its own database) sharing a
  // secrets file: what one hands out names its deployment and does not open at the other.
  temp_dir shared;
  auto secrets = shared.path + "/cluster.secrets";
  cl::storage::write_secrets_file(secrets);
  auto same_secrets = [&](cl::config::settings& s) { s.secrets_file = secrets; };
  test_service ours{same_secrets}, theirs{same_secrets};
  REQUIRE(ours.service().store().deployment_id() != theirs.service().store().deployment_id());
  auto token = token_with("content-lake.read content-lake.write");
  // Theirs has written more than ours: a position of theirs is past nothing of ours by number.
  for (int i = 0; i < 3; ++i) REQUIRE(post_json(theirs.port(), "/v0/content-lake/works", token, R"({"title":"T"})")->status == 201);
  auto mine = post_json(ours.port(), "/v0/content-lake/works", token, R"({"title":"Ours"})");
  REQUIRE(mine);
  REQUIRE(mine->status == 201);
  auto path = "/v0/content-lake/works/" + std::string{json::parse(mine->body).at("id").as_string()};
  auto foreign = post_json(theirs.port(), "/v0/content-lake/works", token, R"({"title":"Theirs"})");
  REQUIRE(foreign);
  auto position = foreign->header("content-lake-position");
  REQUIRE_FALSE(position.empty());
  auto r = at_position(ours.port(), "GET", path, token, position);
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(reason_of(*r) == "POSITION_INVALID");
  // ... and ours at theirs, both ways, and a feed cursor too.
  auto back = at_position(theirs.port(), "GET", "/v0/content-lake/works", token, mine->header("content-lake-position"));
  REQUIRE(back);
  CHECK(back->status == 400);
  CHECK(reason_of(*back) == "POSITION_INVALID");
  auto cursor = json::parse(get_with_token(theirs.port(), "/v0/content-lake/changes", token)->body).at("next_cursor");
  auto feed = get_with_token(ours.port(), "/v0/content-lake/changes?since=" + std::string{cursor.as_string()}, token);
  REQUIRE(feed);
  CHECK(feed->status == 400);
  CHECK(reason_of(*feed) == "CURSOR_INVALID");
  // Its own position still opens at each.
  CHECK(at_position(ours.port(), "GET", path, token, mine->header("content-lake-position"))->status == 200);
}

TEST_CASE("with the position of a write on one node, the other node reads it and finds it by search at once",
          "[postgresql][nodes][position]") {
  // B's index looks for changes every 400 ms: a search right after a write would miss it.
  two_nodes nodes{[](cl::config::settings& s) { set_option(s, "search.batch_interval_ms", "400"); }};
  auto& a = nodes.a;
  auto& b = nodes.b;
  auto token = token_with("content-lake.read content-lake.write");
  auto created = post_json(a.port(), "/v0/content-lake/resources", token, chapter("Kelp", "kelp forest"));
  REQUIRE(created);
  REQUIRE(created->status == 201);
  std::string id{json::parse(created->body).at("id").as_string()};
  auto path = "/v0/content-lake/resources/" + id;
  // B has the Resource in its hot cache (its gauge counts the bytes)... A read that races B's
  // follower dropping the key for A's create is answered and not kept: B reads until it is kept.
  auto cached = [&] { return metric(b.admin_port(), "contentlake_postgresql_cache_bytes"); };
  auto before = cached();
  REQUIRE(before >= 0);
  CHECK(eventually([&] {
    auto read = get_with_token(b.port(), path, token);
    return read && read->status == 200 && cached() > before;
  }));
  // ... A changes it: B answers the change at once for a caller who sends the position back.
  auto current = json::parse(get_with_token(a.port(), path, token)->body).as_object();
  auto patched = http_request(a.port(), "PATCH", path,
                              {{"Authorization", "Bearer " + token}, {"Content-Type", "application/merge-patch+json"}},
                              R"({"title":"Kelp beds","update_token":")" + std::string{current.at("update_token").as_string()} + "\"}");
  REQUIRE(patched);
  REQUIRE(patched->status == 200);
  auto position = patched->header("content-lake-position");
  REQUIRE_FALSE(position.empty());
  auto read = at_position(b.port(), "GET", path, token, position);
  REQUIRE(read);
  REQUIRE(read->status == 200);
  CHECK(json::parse(read->body).at("title").as_string() == "Kelp beds");

  auto made = post_json(a.port(), "/v0/content-lake/resources", token, chapter("Eelgrass", "eelgrass meadow"));
  REQUIRE(made);
  REQUIRE(made->status == 201);
  auto found = at_position(b.port(), "POST", "/v0/content-lake/search", token, made->header("content-lake-position"),
                           R"({"query":"eelgrass"})");
  REQUIRE(found);
  REQUIRE(found->status == 200);
  CHECK(hit_ids(*found) == std::vector<std::string>{std::string{json::parse(made->body).at("id").as_string()}});
}

TEST_CASE("a search whose node's index does not reach the position in time answers 503 SEARCH_INDEX_BEHIND",
          "[postgresql][nodes][position]") {
  // B's index looks for changes once a minute: after its first look, nothing new for the test. Its
  // first look is the one /readyz reports (a search answered before it would not prove it was done).
  two_nodes nodes{[](cl::config::settings& s) { set_option(s, "search.batch_interval_ms", "60000"); }};
  auto& a = nodes.a;
  auto& b = nodes.b;
  auto token = token_with("content-lake.read content-lake.write");
  REQUIRE(eventually([&] {
    auto ready = http_request(b.admin_port(), "GET", "/readyz");
    return ready && ready->body.find(R"("search_index_caught_up":true)") != std::string::npos;
  }));
  auto made = post_json(a.port(), "/v0/content-lake/resources", token, chapter("Kelp", "kelp forest"));
  REQUIRE(made);
  REQUIRE(made->status == 201);
  auto r = at_position(b.port(), "POST", "/v0/content-lake/search", token, made->header("content-lake-position"),
                       R"({"query":"kelp"})");
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(reason_of(*r) == "SEARCH_INDEX_BEHIND");
  CHECK(r->header("retry-after") == "1");
  // The same search without the position is answered from what B's index holds (eventually consistent).
  CHECK(post_json(b.port(), "/v0/content-lake/search", token, R"({"query":"kelp"})")->status == 200);
}
