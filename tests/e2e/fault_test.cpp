// Faults: late and dead concern actors, supervisor restarts, restart intensity, graceful drain.

#include "actors/directory.hpp"
#include "actors/interfaces.hpp"
#include "actors/search/search_messages.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"
#include "tests/support/threads.hpp"
#include "tests/support/reader_mocks.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <future>
#include <set>
#include <thread>

using namespace cl::testing;
using cl::actors::concern_handles;
namespace json = boost::json;

namespace {

using hold_atom = caf::atom_constant<caf::atom("hold")>;
using release_atom = caf::atom_constant<caf::atom("release")>;

/// Holds every `hold` request until `release`: lets a test keep a request in flight.
struct gate_state {
  std::vector<caf::response_promise> held;
};

caf::behavior gate(caf::stateful_actor<gate_state>* self, std::shared_ptr<std::atomic<int>> held_count) {
  return {
    [self, held_count](hold_atom) {
      self->state.held.push_back(self->make_response_promise());
      ++*held_count;
    },
    [self](release_atom) {
      for (auto& rp : self->state.held) rp.deliver(caf::ok_atom::value);
      self->state.held.clear();
    },
  };
}

/// A record reader with the real interface that answers "not found" only when the gate opens.
cl::actors::reader_actor::behavior_type gated_store(cl::actors::reader_actor::pointer self,
                                                           caf::actor gate_handle) {
  return cl::testing::reader_finding_nothing_else(
    [self, gate_handle](cl::actors::fetch_atom, const std::string&, const std::string&)
      -> caf::result<cl::actors::fetch_outcome> {
      auto rp = self->make_response_promise<cl::actors::fetch_outcome>();
      self->request(gate_handle, std::chrono::seconds{30}, hold_atom::value)
        .then([rp](caf::ok_atom) mutable { rp.deliver(cl::actors::fetch_outcome{false, {}}); },
              [rp](caf::error& e) mutable { rp.deliver(e); });
      return rp;
    });
}

/// A Resource created by u_alice of t_test (who then owns it), for reads that must reach the reader.
std::string created_resource(unsigned short port) {
  auto r = cl::testing::post_json(port, "/v0/content-lake/resources", cl::testing::token_with("content-lake.read content-lake.write"),
                                  R"({"title":"Held","type":"CHAPTER","language":"en","content":{"format":"cl.content/1",)"
                                  R"("blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"x"}]}]}})");
  REQUIRE(r);
  REQUIRE(r->status == 201);
  return std::string{boost::json::parse(r->body).as_object().at("id").as_string()};
}

struct silent_state {
  std::vector<caf::typed_response_promise<cl::actors::auth_outcome>> held;
};

/// An auth actor that never answers.
cl::actors::auth_actor::behavior_type silent_auth(cl::actors::auth_actor::stateful_pointer<silent_state> self) {
  return {
    [self](cl::actors::verify_atom, const std::string&) -> caf::result<cl::actors::auth_outcome> {
      auto rp = self->make_response_promise<cl::actors::auth_outcome>();
      self->state.held.push_back(rp);
      return rp;
    },
    [](cl::actors::recheck_atom) {},
  };
}

}  // namespace

TEST_CASE("a concern actor that does not answer in time turns into 503 BACKEND_UNAVAILABLE", "[fault]") {
  test_service svc{[](cl::config::settings& s) { s.actors.ask_timeout_ms = 300; }};
  auto mute = svc.service().system().spawn(silent_auth);
  svc.service().directory().update([&](concern_handles& h) { h.set<cl::actors::auth_actor>(mute); });
  auto r = get_with_token(svc.port(), "/v0/content-lake/resources/res_x", read_token());
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(reason_of(*r) == "BACKEND_UNAVAILABLE");
  CHECK(r->header("retry-after") == "1");
  caf::anon_send_exit(mute, caf::exit_reason::kill);
}

TEST_CASE("a client that closes a request still being served gives its connection slot back at once", "[fault][http]") {
  test_service svc{[](cl::config::settings& s) {
    s.actors.ask_timeout_ms = 30000;
    s.http.max_connections = 2;
  }};
  auto mute = svc.service().system().spawn(silent_auth);
  svc.service().directory().update([&](concern_handles& h) { h.set<cl::actors::auth_actor>(mute); });
  auto connections = [&] { return metric(svc.admin_port(), "contentlake_http_connections"); };
  const std::string held = "GET /v0/content-lake/resources/res_x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                           + read_token() + "\r\n\r\n";
  // Both slots serve a request the auth actor never answers: a new connection would be refused.
  auto a = std::make_unique<connection>(svc.port());
  connection b{svc.port()};
  a->send(held);
  b.send(held);
  REQUIRE(eventually([&] { return connections() == 2.0; }));
  // a's client leaves: the service, watching the socket of every request in flight, notices and
  // gives the slot back, long before the request's 30 s.
  a.reset();
  REQUIRE(eventually([&] { return connections() == 1.0; }, 5000));
  connection c{svc.port()};
  auto r = c.request("GET", "/v0/openapi.json");
  REQUIRE(r);
  CHECK(r->status == 200);
  // b, still held, is answered once its callee is gone: 503, as any request whose callee does not answer.
  caf::anon_send_exit(mute, caf::exit_reason::kill);
  auto answer = b.read_response();
  REQUIRE(answer);
  CHECK(answer->status == 503);
}

TEST_CASE("killing a concern actor under load: every request is answered, the actor comes back", "[fault]") {
  test_service svc{[](cl::config::settings& s) { s.rate_limit.burst = 100000; }};
  auto token = read_token();
  auto path = "/v0/content-lake/resources/" + created_resource(svc.port());
  auto old = svc.service().directory().snapshot()->get<cl::actors::reader_actor>();
  REQUIRE(old);
  constexpr int clients = 4, per_client = 150;
  std::atomic<int> answered{0}, ok{0}, unavailable{0}, other{0};
  std::vector<std::future<void>> workers;
  for (int c = 0; c < clients; ++c)
    workers.push_back(std::async(std::launch::async, [&] {
      connection conn{svc.port(), 10000};
      for (int i = 0; i < per_client; ++i) {
        auto r = conn.request("GET", path, {{"Authorization", "Bearer " + token}});
        if (!r) return;  // a hang or a dropped connection: counted as unanswered below
        ++answered;
        if (r->status == 200) ++ok;
        else if (r->status == 503 && reason_of(*r) == "BACKEND_UNAVAILABLE") ++unavailable;
        else ++other;
      }
    }));
  REQUIRE(eventually([&] { return answered >= 100; }));
  caf::anon_send_exit(old, caf::exit_reason::kill);
  for (auto& w : workers) w.get();
  CHECK(answered == clients * per_client);
  CHECK(other == 0);
  CHECK(ok + unavailable == clients * per_client);
  // The supervisor has published a new, live reader: no view hands out the killed one any more.
  REQUIRE(eventually([&] {
    auto& directory = svc.service().directory();
    for (std::size_t i = 0; i < directory.readers(); ++i) {
      auto now = directory.snapshot()->get<cl::actors::reader_actor>();
      if (!now || now.address() == old.address()) return false;
    }
    return true;
  }));
  auto r = get_with_token(svc.port(), path, token);
  REQUIRE(r);
  CHECK(r->status == 200);
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  CHECK(m->body.find(R"(contentlake_actor_restarts_total{actor="reader"} 1)") != std::string::npos);
}

TEST_CASE("past the restart intensity the service stops with a non-zero exit code", "[fault]") {
  test_service svc{[](cl::config::settings& s) {
    s.supervisor.max_restarts = 2;
    s.supervisor.window_seconds = 60;
  }};
  for (int i = 0; i < 3; ++i) {
    auto victim = svc.service().directory().snapshot()->get<cl::actors::auth_actor>();
    REQUIRE(victim);
    caf::anon_send_exit(victim, caf::exit_reason::kill);
    if (i < 2)
      REQUIRE(eventually([&] { return svc.service().directory().snapshot()->get<cl::actors::auth_actor>().address() != victim.address(); }));
  }
  auto code = svc.wait_exit(15000);
  REQUIRE(code);
  CHECK(*code == 70);
}

TEST_CASE("graceful stop finishes the request in flight, then exits 0", "[fault][shutdown]") {
  test_service svc;
  auto held = std::make_shared<std::atomic<int>>(0);
  auto g = svc.service().system().spawn(gate, held);
  auto path = "/v0/content-lake/resources/" + created_resource(svc.port());
  auto store = svc.service().system().spawn(gated_store, g);
  // Reads go to the gated reader, not to the store in place (records == nullptr).
  svc.service().directory().update([&](concern_handles& h) {
    h.set<cl::actors::reader_actor>(store);
    h.records = nullptr;
  });
  auto token = read_token();
  auto in_flight = std::async(std::launch::async, [&] {
    return get_with_token(svc.port(), path, token);
  });
  REQUIRE(eventually([&] { return held->load() == 1; }));
  svc.service().stop();
  // New connections are no longer accepted once draining has begun.
  REQUIRE(eventually([&] {
    try {
      connection probe{svc.port(), 1000};
      auto r = probe.request("GET", "/v0/openapi.json");
      return !r || r->status == 503;
    } catch (const std::exception&) {
      return true;
    }
  }));
  caf::anon_send(g, release_atom::value);
  auto r = in_flight.get();
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(r->header("connection") == "close");
  auto code = svc.wait_exit(15000);
  REQUIRE(code);
  CHECK(*code == 0);
  caf::anon_send_exit(g, caf::exit_reason::kill);
  caf::anon_send_exit(store, caf::exit_reason::kill);
}

TEST_CASE("the rights resolver and the contracts actor come back after a kill, with the same answers", "[fault][contracts]") {
  test_service svc;
  auto token = token_with("content-lake.read content-lake.write contracts.read contracts.write");
  auto port = svc.port();
  auto id_of = [](const std::optional<http_response>& r) {
    REQUIRE(r);
    REQUIRE(r->status == 201);
    return std::string{boost::json::parse(r->body).as_object().at("id").as_string()};
  };
  auto work = id_of(post_json(port, "/v0/content-lake/works", token, R"({"title":"Tides"})"));
  auto resource = id_of(post_json(port, "/v0/content-lake/resources", token,
                                  R"({"title":"T","type":"CHAPTER","language":"en","work_id":")" + work
                                    + R"(","content":{"format":"cl.content/1","blocks":[]}})"));
  auto contract = id_of(post_json(port, "/v0/contracts", token,
                                  R"({"title":"R","status":"ACTIVE","valid_from":"2020-01-01T00:00:00Z","work_ids":[")" + work
                                    + R"("],"territorial_rights":[{"worldwide":true,"status":"PERMITTED"}],)"
                                      R"("usage_terms":[{"usage_type":"ACCESS","status":"PERMITTED"}]})"));
  auto rights_path = "/v0/content-lake/resources/" + resource + "?fields=rights.usable,rights.basis";
  auto before = get_with_token(port, rights_path, token);
  REQUIRE(before->status == 200);
  REQUIRE(before->body.find("\"usable\":true") != std::string::npos);

  auto old_rights = svc.service().directory().snapshot()->get<cl::actors::rights_actor>();
  auto old_contracts = svc.service().directory().snapshot()->get<cl::actors::contracts_actor>();
  caf::anon_send_exit(old_rights, caf::exit_reason::kill);
  caf::anon_send_exit(old_contracts, caf::exit_reason::kill);
  REQUIRE(eventually([&] {
    auto now = svc.service().directory().snapshot();
    return now->get<cl::actors::rights_actor>() && now->get<cl::actors::contracts_actor>() && now->get<cl::actors::rights_actor>().address() != old_rights.address()
           && now->get<cl::actors::contracts_actor>().address() != old_contracts.address();
  }));
  // A restarted resolver starts a new epoch: the answer is resolved again, and is the same.
  auto after = get_with_token(port, rights_path, token);
  REQUIRE(after->status == 200);
  CHECK(after->body == before->body);
  CHECK(get_with_token(port, "/v0/contracts/" + contract, token)->status == 200);
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  CHECK(m->body.find(R"(contentlake_actor_restarts_total{actor="rights"} 1)") != std::string::npos);
  CHECK(m->body.find(R"(contentlake_actor_restarts_total{actor="contracts"} 1)") != std::string::npos);
}

TEST_CASE("the access actor comes back after a kill: grants hold, denials hold, no request hangs", "[fault][access]") {
  test_service svc{[](cl::config::settings& s) { s.rate_limit.burst = 100000; }};
  auto port = svc.port();
  auto owner = token_with("content-lake.read content-lake.write", "t_test", "u_alice");
  auto stranger = token_with("content-lake.read", "t_test", "u_mallory");
  auto path = "/v0/content-lake/resources/" + created_resource(port);
  auto old = svc.service().directory().snapshot()->get<cl::actors::access_actor>();
  REQUIRE(old);
  // The stranger is never cached (denials are not), so its reads ask the actor while it dies.
  std::atomic<int> answered{0}, denied{0}, unavailable{0}, other{0};
  auto prober = std::async(std::launch::async, [&] {
    connection conn{port, 10000};
    for (int i = 0; i < 300; ++i) {
      auto r = conn.request("GET", path, {{"Authorization", "Bearer " + stranger}});
      if (!r) return;
      ++answered;
      if (r->status == 403 && reason_of(*r) == "ACCESS_DENIED") ++denied;
      else if (r->status == 503 && reason_of(*r) == "BACKEND_UNAVAILABLE") ++unavailable;
      else ++other;
    }
  });
  REQUIRE(eventually([&] { return answered >= 50; }));
  caf::anon_send_exit(old, caf::exit_reason::kill);
  prober.get();
  CHECK(answered == 300);
  CHECK(other == 0);  // never a 200: a failing access check denies, it does not let through
  CHECK(denied + unavailable == 300);
  REQUIRE(eventually([&] {
    auto now = svc.service().directory().snapshot()->get<cl::actors::access_actor>();
    return now && now.address() != old.address();
  }));
  CHECK(get_with_token(port, path, owner)->status == 200);
  CHECK(get_with_token(port, path, stranger)->status == 403);
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  CHECK(m->body.find(R"(contentlake_actor_restarts_total{actor="access"} 1)") != std::string::npos);
}

TEST_CASE("the ledger actor comes back after a kill; stored answers survive it", "[fault][idempotency]") {
  test_service svc;
  auto port = svc.port();
  auto token = token_with("content-lake.read content-lake.write");
  auto keyed = [&] {
    return http_request(port, "POST", "/v0/content-lake/works",
                        {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}, {"Idempotency-Key", "k-fault"}},
                        R"({"title":"Tides"})");
  };
  auto first = keyed();
  REQUIRE(first);
  REQUIRE(first->status == 201);
  auto old = svc.service().directory().snapshot()->get<cl::actors::ledger_actor>();
  REQUIRE(old);
  caf::anon_send_exit(old, caf::exit_reason::kill);
  REQUIRE(eventually([&] {
    auto now = svc.service().directory().snapshot()->get<cl::actors::ledger_actor>();
    return now && now.address() != old.address();
  }));
  auto again = keyed();
  REQUIRE(again);
  CHECK(again->status == 201);
  CHECK(again->body == first->body);
  CHECK(again->header("idempotent-replayed") == "true");
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  CHECK(m->body.find(R"(contentlake_actor_restarts_total{actor="ledger"} 1)") != std::string::npos);
}

TEST_CASE("search session actors come back after a kill; sessions survive it and never repeat a hit", "[fault][search]") {
  test_service svc{[](cl::config::settings& s) { s.rate_limit.burst = 100000; }};
  auto port = svc.port();
  auto token = token_with("content-lake.read content-lake.write");
  for (int i = 0; i < 3; ++i) {
    auto r = post_json(port, "/v0/content-lake/resources", token,
                       R"({"title":"Kelp )" + std::to_string(i) + R"(","type":"CHAPTER","language":"en","content":{"format":"cl.content/1",)"
                       R"("blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"kelp forest"}]}]}})");
    REQUIRE(r);
    REQUIRE(r->status == 201);
  }
  auto search = [&](const std::string& body) { return post_json(port, "/v0/content-lake/search", token, body); };
  REQUIRE(eventually([&] {
    auto r = search(R"({"query":"kelp","page_size":100})");
    return r && r->status == 200 && json::parse(r->body).at("hits").as_array().size() == 3;
  }));
  auto first = search(R"({"query":"kelp","page_size":1})");
  REQUIRE(first);
  REQUIRE(first->status == 200);
  auto page = json::parse(first->body).as_object();
  std::string sid{page.at("search_id").as_string()};
  std::set<std::string> seen{std::string{page.at("hits").as_array().at(0).at("id").as_string()}};
  // Every instance (one per directory view) is killed, once: the instances are collected before the
  // first kill, so a replacement the supervisor publishes meanwhile is never killed again (that would
  // spend its restart intensity and stop the service).
  auto& directory = svc.service().directory();
  std::vector<cl::actors::search_session_actor> instances;
  std::set<caf::actor_addr> killed;
  for (std::size_t i = 0; i < 64 && instances.size() < directory.readers(); ++i) {
    auto h = directory.snapshot()->get<cl::actors::search_session_actor>();
    REQUIRE(h);
    if (killed.insert(h.address()).second) instances.push_back(h);
  }
  REQUIRE(instances.size() == directory.readers());
  for (auto& h : instances) caf::anon_send_exit(h, caf::exit_reason::kill);
  REQUIRE(eventually([&] {
    for (std::size_t i = 0; i < directory.readers(); ++i) {
      auto h = directory.snapshot()->get<cl::actors::search_session_actor>();
      if (!h || killed.count(h.address())) return false;
    }
    return true;
  }));
  for (int i = 0; i < 2; ++i) {
    auto next = search(R"({"search_id":")" + sid + R"(","page_size":1})");
    REQUIRE(next);
    REQUIRE(next->status == 200);
    auto hits = json::parse(next->body).at("hits").as_array();
    REQUIRE(hits.size() == 1);
    CHECK(seen.insert(std::string{hits.at(0).at("id").as_string()}).second);  // the session kept what it answered
  }
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  CHECK(m->body.find(R"(contentlake_actor_restarts_total{actor="search-session"})") != std::string::npos);
}

namespace {

/// The ids of this process's threads named `name`.
std::set<int> threads_named(const std::string& name) {
  std::set<int> tids;
  for (const auto& t : threads_of())
    if (t.name == name) tids.insert(t.tid);
  return tids;
}

}  // namespace

TEST_CASE("the indexer comes back after a kill on the same work lane; writes around the kill are all found once", "[fault][search]") {
  test_service svc{[](cl::config::settings& s) { s.rate_limit.burst = 100000; }};
  auto port = svc.port();
  auto token = token_with("content-lake.read content-lake.write");
  auto create = [&](int i) {
    auto r = post_json(port, "/v0/content-lake/resources", token,
                       R"({"title":"Eelgrass )" + std::to_string(i) + R"(","type":"CHAPTER","language":"en","content":{"format":"cl.content/1",)"
                       R"("blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"eelgrass meadow"}]}]}})");
    REQUIRE(r);
    REQUIRE(r->status == 201);
  };
  auto found = [&] {
    std::set<std::string> ids;
    auto r = post_json(port, "/v0/content-lake/search", token, R"({"query":"eelgrass","page_size":100})");
    if (!r || r->status != 200) return std::make_pair(std::size_t{0}, ids);
    auto hits = json::parse(r->body).at("hits").as_array();
    for (const auto& h : hits) ids.insert(std::string{h.at("id").as_string()});
    return std::make_pair(static_cast<std::size_t>(hits.size()), ids);
  };
  for (int i = 0; i < 3; ++i) create(i);
  REQUIRE(eventually([&] { return found().first == 3; }));
  // Idle, the lane is the one thread of that name (a batch's shard helpers carry it while they run).
  std::set<int> lane;
  REQUIRE(eventually([&] {
    lane = threads_named("cl-indexer");
    return lane.size() == 1;
  }));
  auto& directory = svc.service().directory();
  auto old = directory.snapshot()->get<cl::actors::indexer_actor>();
  REQUIRE(old);
  caf::anon_send_exit(old, caf::exit_reason::kill);
  for (int i = 3; i < 6; ++i) create(i);
  REQUIRE(eventually([&] {
    auto h = directory.snapshot()->get<cl::actors::indexer_actor>();
    return h && h.address() != old.address();
  }));
  REQUIRE(eventually([&] { return found().first == 6; }));
  auto [count, ids] = found();
  CHECK(count == 6);
  CHECK(ids.size() == 6);  // each once
  // The replacement runs its work on the same lane: the thread that kept its priority.
  auto after = threads_named("cl-indexer");
  CHECK(std::includes(after.begin(), after.end(), lane.begin(), lane.end()));
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  CHECK(m->body.find(R"(contentlake_actor_restarts_total{actor="indexer"} 1)") != std::string::npos);
}

TEST_CASE("the backend's upkeep runs as supervised actors: each killed comes back, and its work goes on",
          "[fault][backend]") {
  test_service svc{[](cl::config::settings& s) {
    s.rate_limit.burst = 100000;
    s.admin_fault_injection = true;
    s.supervisor.max_restarts = 20;  // six kills in a few seconds are not a crash loop
  }};
  auto token = read_token();
  auto path = "/v0/content-lake/resources/" + created_resource(svc.port());
  // Every node keeps leases and gates positions; where other nodes share the records, it also
  // follows the log, probes the database, shares its rate tally and keeps its held slots alive.
  std::vector<std::string> upkeep{"lease-keeper", "log-gate"};
  if (!svc.postgresql_url().empty())
    upkeep.insert(upkeep.end(), {"log-follower", "store-probe", "rate-sharing", "held-slots"});
  for (const auto& name : upkeep) {
    INFO(name);
    auto killed = http_request(svc.admin_port(), "POST", "/faults/kill?actor=" + name);
    REQUIRE(killed);
    CHECK(killed->status == 202);
    CHECK(eventually(
      [&] { return metric(svc.admin_port(), "contentlake_actor_restarts_total{actor=\"" + name + "\"}") == 1; }));
  }
  // The work goes on: leases held again, the log followed again (its lag back under a second), reads served.
  CHECK(eventually([&] { return metric(svc.admin_port(), "contentlake_lease_held{lease=\"webhooks\"}") == 1; }));
  if (!svc.postgresql_url().empty())
    CHECK(eventually([&] { return metric(svc.admin_port(), "contentlake_change_log_lag_seconds") < 1; }));
  auto r = get_with_token(svc.port(), path, token);
  REQUIRE(r);
  CHECK(r->status == 200);
  auto ready = http_request(svc.admin_port(), "GET", "/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 200);
}
