// Idempotency-Key (spec 3.3, 4.6): replays byte for byte, stored failures, mismatches, keys in
// use, scoping by client, retention. The crash test with SIGKILL is tests/e2e/crash_test.cpp.

#include "actors/directory.hpp"
#include "actors/interfaces.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <future>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string rw = "content-lake.read content-lake.write";

std::string chapter(const std::string& title) {
  return R"({"title":")" + title + R"(","type":"CHAPTER","language":"en","content":{"format":"cl.content/1","blocks":[)"
         R"({"type":"paragraph","key":"p1","children":[{"type":"span","text":"Seven metres."}]}]}})";
}

std::optional<http_response> send(unsigned short port, const std::string& method, const std::string& path,
                                  const std::string& token, const std::string& key, const std::string& body,
                                  const std::string& content_type = "application/json") {
  std::vector<std::pair<std::string, std::string>> headers = {{"Authorization", "Bearer " + token},
                                                              {"Content-Type", content_type}};
  if (key != "<none>") headers.emplace_back("Idempotency-Key", key);
  return http_request(port, method, path, headers, body);
}

std::size_t resources_titled(unsigned short port, const std::string& token, const std::string& title) {
  auto r = get_with_token(port, "/v0/content-lake/resources?page_size=100", token);
  REQUIRE(r);
  auto body = json::parse(r->body).as_object();
  std::size_t n = 0;
  for (const auto& item : body.at("resources").as_array())
    if (item.as_object().at("title").as_string() == title) ++n;
  return n;
}

std::string metrics_of(test_service& svc) {
  auto m = http_request(svc.admin_port(), "GET", "/metrics");
  REQUIRE(m);
  return m->body;
}

struct pending_write {
  caf::typed_response_promise<bool> promise;
  cl::storage::mutation m;
};

struct gated_state {
  std::vector<pending_write> pending;
};

/// A writer that holds every write until it gets `flush`, then hands them to `real`.
cl::actors::writer_actor::behavior_type gated_writer(cl::actors::writer_actor::stateful_pointer<gated_state> self,
                                                     cl::actors::writer_actor real,
                                                     std::shared_ptr<std::atomic<int>> held) {
  return {
    [self, held](cl::actors::write_atom, cl::storage::mutation m) -> caf::result<bool> {
      auto rp = self->make_response_promise<bool>();
      self->state.pending.push_back({rp, std::move(m)});
      ++*held;
      return rp;
    },
    [](cl::actors::prune_atom) {},
    [self, real](cl::actors::flush_atom) {
      for (auto& p : self->state.pending)
        self->request(real, caf::infinite, cl::actors::write_atom_v, std::move(p.m))
          .then([rp = p.promise](bool kept) mutable { rp.deliver(kept); },
                [rp = p.promise](caf::error& e) mutable { rp.deliver(e); });
      self->state.pending.clear();
    },
  };
}

}  // namespace

TEST_CASE("a retry with the same key replays the first answer byte for byte, once executed", "[idempotency]") {
  test_service svc;
  auto token = token_with(rw);
  auto first = send(svc.port(), "POST", "/v0/content-lake/resources", token, "create-tides-1", chapter("Tides"));
  REQUIRE(first);
  REQUIRE(first->status == 201);
  CHECK(first->header("idempotent-replayed").empty());
  for (int i = 0; i < 3; ++i) {
    auto again = send(svc.port(), "POST", "/v0/content-lake/resources", token, "create-tides-1", chapter("Tides"));
    REQUIRE(again);
    CHECK(again->status == 201);
    CHECK(again->body == first->body);
    CHECK(again->header("location") == first->header("location"));
    CHECK(again->header("etag") == first->header("etag"));
    CHECK(again->header("content-type") == first->header("content-type"));
    CHECK(again->header("idempotent-replayed") == "true");
    // The replay carries a position too (docs/api.md "Read your writes"), and a read that sends it
    // back sees the write.
    INFO(again->body);
    REQUIRE_FALSE(again->header("content-lake-position").empty());
    auto at = http_request(svc.port(), "GET", first->header("location"),
                           {{"Authorization", "Bearer " + token},
                            {"Content-Lake-Position", again->header("content-lake-position")}});
    REQUIRE(at);
    CHECK(at->status == 200);
  }
  // The same JSON with members reordered and other whitespace is the same request.
  auto reordered = send(svc.port(), "POST", "/v0/content-lake/resources", token, "create-tides-1",
                        R"({ "language":"en", "type":"CHAPTER", "title":"Tides", "content":{"blocks":[{"key":"p1",)"
                        R"("type":"paragraph","children":[{"text":"Seven metres.","type":"span"}]}],"format":"cl.content/1"}})");
  REQUIRE(reordered);
  CHECK(reordered->body == first->body);
  // One effect: one Resource, one CREATION Activity.
  CHECK(resources_titled(svc.port(), token, "Tides") == 1);
  auto id = std::string{json::parse(first->body).as_object().at("id").as_string()};
  auto activities = json::parse(get_with_token(svc.port(), "/v0/content-lake/activities?resource_id=" + id, token)->body);
  CHECK(activities.as_object().at("activities").as_array().size() == 1);
  CHECK(metrics_of(svc).find(R"(contentlake_idempotency_total{outcome="replay"} 4)") != std::string::npos);
  // A GET ignores the header.
  auto read = http_request(svc.port(), "GET", "/v0/content-lake/resources/" + id,
                           {{"Authorization", "Bearer " + token}, {"Idempotency-Key", "create-tides-1"}});
  REQUIRE(read);
  CHECK(read->status == 200);
}

TEST_CASE("every write operation takes a key: Works, PATCH, contracts, grants", "[idempotency]") {
  test_service svc;
  auto token = token_with(rw + " contracts.read contracts.write");
  auto work1 = send(svc.port(), "POST", "/v0/content-lake/works", token, "w-1", R"({"title":"Tides"})");
  auto work2 = send(svc.port(), "POST", "/v0/content-lake/works", token, "w-1", R"({"title":"Tides"})");
  REQUIRE(work1);
  REQUIRE(work2);
  CHECK(work1->status == 201);
  CHECK(work2->body == work1->body);
  auto created = json::parse(send(svc.port(), "POST", "/v0/content-lake/resources", token, "<none>", chapter("Ebb"))->body);
  auto id = std::string{created.as_object().at("id").as_string()};
  auto token_of = std::string{created.as_object().at("update_token").as_string()};
  auto patch = R"({"title":"Flood","update_token":")" + token_of + "\"}";
  auto p1 = send(svc.port(), "PATCH", "/v0/content-lake/resources/" + id, token, "p-1", patch, "application/merge-patch+json");
  auto p2 = send(svc.port(), "PATCH", "/v0/content-lake/resources/" + id, token, "p-1", patch, "application/merge-patch+json");
  REQUIRE(p1);
  REQUIRE(p2);
  CHECK(p1->status == 200);
  CHECK(p2->status == 200);  // without the key this retry would be 409 TOKEN_MISMATCH
  CHECK(p2->body == p1->body);
  CHECK(p2->header("idempotent-replayed") == "true");
  auto g1 = send(svc.port(), "PUT", "/v0/content-lake/resources/" + id + "/access/u_bob", token, "g-1", R"({"role":"reader"})");
  auto g2 = send(svc.port(), "PUT", "/v0/content-lake/resources/" + id + "/access/u_bob", token, "g-1", R"({"role":"reader"})");
  REQUIRE(g1);
  REQUIRE(g2);
  CHECK(g1->status == 201);
  CHECK(g2->status == 201);  // replayed: the stored 201, not a fresh 200
  CHECK(g2->body == g1->body);
}

TEST_CASE("a failure after execution began is stored and replayed; a validation failure stores nothing",
          "[idempotency]") {
  test_service svc;
  auto token = token_with(rw);
  auto created = json::parse(send(svc.port(), "POST", "/v0/content-lake/resources", token, "<none>", chapter("Ebb"))->body);
  auto id = std::string{created.as_object().at("id").as_string()};
  auto current = std::string{created.as_object().at("update_token").as_string()};
  auto stale = send(svc.port(), "PATCH", "/v0/content-lake/resources/" + id, token, "stale-1",
                    R"({"title":"Flood","update_token":"upd_stale"})", "application/merge-patch+json");
  REQUIRE(stale);
  REQUIRE(stale->status == 409);
  CHECK(reason_of(*stale) == "TOKEN_MISMATCH");
  auto replayed = send(svc.port(), "PATCH", "/v0/content-lake/resources/" + id, token, "stale-1",
                       R"({"title":"Flood","update_token":"upd_stale"})", "application/merge-patch+json");
  REQUIRE(replayed);
  CHECK(replayed->status == 409);
  CHECK(replayed->body == stale->body);
  CHECK(replayed->header("idempotent-replayed") == "true");

  // Validation (PCF006: heading level 9) fails before execution: nothing is stored under the key,
  // so the corrected request with the same key executes.
  auto invalid = send(svc.port(), "POST", "/v0/content-lake/resources", token, "fix-me",
                      R"({"title":"Bad","type":"CHAPTER","language":"en","content":{"format":"cl.content/1","blocks":[)"
                      R"({"type":"heading","key":"h","level":9,"children":[{"type":"span","text":"x"}]}]}})");
  REQUIRE(invalid);
  CHECK(invalid->status == 400);
  auto fixed = send(svc.port(), "POST", "/v0/content-lake/resources", token, "fix-me", chapter("Fixed"));
  REQUIRE(fixed);
  CHECK(fixed->status == 201);
  CHECK(fixed->header("idempotent-replayed").empty());
}

TEST_CASE("the same key with a different request is 422; keys are scoped by client and checked by caller",
          "[idempotency]") {
  test_service svc;
  auto alice = token_with(rw, "t_test", "u_alice");
  auto first = send(svc.port(), "POST", "/v0/content-lake/resources", alice, "k-1", chapter("First"));
  REQUIRE(first->status == 201);
  auto other_body = send(svc.port(), "POST", "/v0/content-lake/resources", alice, "k-1", chapter("Second"));
  REQUIRE(other_body);
  CHECK(other_body->status == 422);
  CHECK(reason_of(*other_body) == "IDEMPOTENCY_KEY_MISMATCH");
  CHECK(json::parse(other_body->body).at("error").at("code").as_string() == "FAILED_PRECONDITION");
  auto other_path = send(svc.port(), "POST", "/v0/content-lake/works", alice, "k-1", R"({"title":"First"})");
  REQUIRE(other_path);
  CHECK(other_path->status == 422);
  CHECK(resources_titled(svc.port(), alice, "Second") == 0);
  // Another user through the same application (client a_testapp): not a replay of alice's answer.
  auto bob = token_with(rw, "t_test", "u_bob");
  auto as_bob = send(svc.port(), "POST", "/v0/content-lake/resources", bob, "k-1", chapter("First"));
  REQUIRE(as_bob);
  CHECK(as_bob->status == 422);
  CHECK(as_bob->body.find("\"id\"") == std::string::npos);
  // Another client with the same key: its own ledger entry, its own Resource.
  auto robot = token_with(rw, "t_test", "a_robot");
  auto as_robot = send(svc.port(), "POST", "/v0/content-lake/resources", robot, "k-1", chapter("First"));
  REQUIRE(as_robot);
  CHECK(as_robot->status == 201);
  CHECK(as_robot->body != first->body);
  CHECK(metrics_of(svc).find(R"(contentlake_idempotency_total{outcome="mismatch"} 3)") != std::string::npos);
}

TEST_CASE("a malformed key is 400 IDEMPOTENCY_KEY_INVALID and nothing is written", "[idempotency]") {
  test_service svc;
  auto token = token_with(rw);
  for (const std::string& bad : {std::string{}, std::string(256, 'k'), std::string{"two words"}, std::string{"caf\xc3\xa9"}}) {
    INFO(bad.size());
    auto r = send(svc.port(), "POST", "/v0/content-lake/resources", token, bad, chapter("Nope"));
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(reason_of(*r) == "IDEMPOTENCY_KEY_INVALID");
  }
  CHECK(resources_titled(svc.port(), token, "Nope") == 0);
  auto longest = send(svc.port(), "POST", "/v0/content-lake/resources", token, std::string(255, '~'), chapter("Yes"));
  REQUIRE(longest);
  CHECK(longest->status == 201);
}

TEST_CASE("the same key while the first request executes is 409; nothing stored; a retry then replays",
          "[idempotency]") {
  test_service svc;
  auto token = token_with(rw);
  auto held = std::make_shared<std::atomic<int>>(0);
  auto real = svc.service().directory().snapshot()->get<cl::actors::writer_actor>();
  auto gate = svc.service().system().spawn(gated_writer, real, held);
  svc.service().directory().update([&](cl::actors::concern_handles& h) { h.set<cl::actors::writer_actor>(gate); });
  auto first = std::async(std::launch::async, [&] {
    return send(svc.port(), "POST", "/v0/content-lake/resources", token, "slow-1", chapter("Slow"));
  });
  REQUIRE(eventually([&] { return held->load() == 1; }));
  auto busy = send(svc.port(), "POST", "/v0/content-lake/resources", token, "slow-1", chapter("Slow"));
  REQUIRE(busy);
  CHECK(busy->status == 409);
  CHECK(reason_of(*busy) == "IDEMPOTENCY_KEY_IN_USE");
  CHECK(busy->header("retry-after") == "1");
  CHECK(held->load() == 1);  // the second never reached the writer
  caf::anon_send(gate, cl::actors::flush_atom_v);
  auto answered = first.get();
  REQUIRE(answered);
  CHECK(answered->status == 201);
  auto retry = send(svc.port(), "POST", "/v0/content-lake/resources", token, "slow-1", chapter("Slow"));
  REQUIRE(retry);
  CHECK(retry->body == answered->body);
  CHECK(resources_titled(svc.port(), token, "Slow") == 1);
  CHECK(metrics_of(svc).find(R"(contentlake_idempotency_total{outcome="in_use"} 1)") != std::string::npos);
  svc.service().directory().update([&](cl::actors::concern_handles& h) { h.set<cl::actors::writer_actor>(real); });
  caf::anon_send_exit(gate, caf::exit_reason::kill);
}

TEST_CASE("after the retention period the key is fresh and its record is pruned", "[idempotency][retention]") {
  test_service svc{[](cl::config::settings& s) {
    s.idempotency.retention_seconds = 2;
    s.idempotency.prune_interval_seconds = 1;  // at least one tick sees the record before it expires
  }};
  auto token = token_with(rw);
  auto first = send(svc.port(), "POST", "/v0/content-lake/resources", token, "short-lived", chapter("Neap"));
  REQUIRE(first->status == 201);
  REQUIRE(eventually([&] { return metrics_of(svc).find("contentlake_idempotency_ledger_entries 1") != std::string::npos; }));
  // Pruned once past retention: the ledger is empty again.
  REQUIRE(eventually([&] { return metrics_of(svc).find("contentlake_idempotency_ledger_entries 0") != std::string::npos; }));
  auto again = send(svc.port(), "POST", "/v0/content-lake/resources", token, "short-lived", chapter("Neap"));
  REQUIRE(again);
  CHECK(again->status == 201);
  CHECK(again->header("idempotent-replayed").empty());
  CHECK(again->body != first->body);  // executed again: a new Resource
  CHECK(resources_titled(svc.port(), token, "Neap") == 2);
}

TEST_CASE("after a restart a stored key still replays: retried in a loop, past a refusal, or for another request",
          "[idempotency]") {
  // A restarted node (or another node) does not know which keys have a stored answer. On
  // PostgreSQL such a key is not looked up before a write whose only effect is its guarded write:
  // the record that write inserts finds the stored one. Whatever the backend, the client sees the
  // stored answers, and a client retrying one key in a loop reaches the writer at most once.
  temp_dir data;
  auto alice = token_with(rw, "t_test", "u_alice");
  auto bob = token_with(rw, "t_test", "u_bob");
  std::optional<http_response> created, patched, other;
  std::string id;
  {
    test_service svc{[&](cl::config::settings& s) { s.data_dir = data.path; }};
    created = send(svc.port(), "POST", "/v0/content-lake/resources", alice, "loop-1", chapter("Spring"));
    REQUIRE(created);
    REQUIRE(created->status == 201);
    id = std::string{json::parse(created->body).as_object().at("id").as_string()};
    other = send(svc.port(), "POST", "/v0/content-lake/resources", alice, "other-1", chapter("Neap"));
    REQUIRE(other->status == 201);
    // Bob may write the Resource, changes it with a key, then loses his grant.
    auto grant = send(svc.port(), "PUT", "/v0/content-lake/resources/" + id + "/access/u_bob", alice, "<none>",
                      R"({"role":"writer"})");
    REQUIRE(grant->status == 201);
    auto token_of = std::string{json::parse(created->body).as_object().at("update_token").as_string()};
    patched = send(svc.port(), "PATCH", "/v0/content-lake/resources/" + id, bob, "bob-1",
                   R"({"title":"Spring tide","update_token":")" + token_of + "\"}", "application/merge-patch+json");
    REQUIRE(patched);
    REQUIRE(patched->status == 200);
    auto revoke = http_request(svc.port(), "DELETE", "/v0/content-lake/resources/" + id + "/access/u_bob",
                               {{"Authorization", "Bearer " + alice}});
    REQUIRE(revoke);
    REQUIRE(revoke->status == 204);
    REQUIRE(svc.stop_and_wait() == 0);
  }
  test_service svc{[&](cl::config::settings& s) { s.data_dir = data.path; }};
  auto before = metrics_of(svc);
  // The same request 21 times: the stored 201 each time, one Resource.
  for (int i = 0; i < 21; ++i) {
    auto again = send(svc.port(), "POST", "/v0/content-lake/resources", alice, "loop-1", chapter("Spring"));
    REQUIRE(again);
    CHECK(again->status == 201);
    CHECK(again->body == created->body);
    CHECK(again->header("location") == created->header("location"));
    CHECK(again->header("idempotent-replayed") == "true");
  }
  auto after = metrics_of(svc);
  CHECK(metric_value(after, "contentlake_storage_mutations_total") - metric_value(before, "contentlake_storage_mutations_total") <= 1);
  CHECK(after.find(R"(contentlake_idempotency_total{outcome="replay"} 21)") != std::string::npos);
  // A key stored for another request: 422, and nothing written.
  auto mismatch = send(svc.port(), "POST", "/v0/content-lake/resources", alice, "other-1", chapter("Flood"));
  REQUIRE(mismatch);
  CHECK(mismatch->status == 422);
  CHECK(reason_of(*mismatch) == "IDEMPOTENCY_KEY_MISMATCH");
  CHECK(resources_titled(svc.port(), alice, "Flood") == 0);
  // Bob's retry would now be refused before it writes (he lost his grant): his stored answer
  // answers instead, as it would have before the restart.
  auto bob_again = send(svc.port(), "PATCH", "/v0/content-lake/resources/" + id, bob, "bob-1",
                        R"({"title":"Spring tide","update_token":")"
                          + std::string{json::parse(created->body).as_object().at("update_token").as_string()} + "\"}",
                        "application/merge-patch+json");
  REQUIRE(bob_again);
  CHECK(bob_again->status == 200);
  CHECK(bob_again->body == patched->body);
  CHECK(bob_again->header("idempotent-replayed") == "true");
  // Without a stored answer the refusal stands, and a new key still executes.
  auto bob_new = send(svc.port(), "PATCH", "/v0/content-lake/resources/" + id, bob, "bob-2",
                      R"({"title":"Neap tide"})", "application/merge-patch+json");
  REQUIRE(bob_new);
  CHECK(bob_new->status / 100 == 4);
  auto fresh = send(svc.port(), "POST", "/v0/content-lake/resources", alice, "loop-2", chapter("Ebb"));
  REQUIRE(fresh);
  CHECK(fresh->status == 201);
  CHECK(fresh->header("idempotent-replayed").empty());
  CHECK(resources_titled(svc.port(), alice, "Spring tide") == 1);
}

TEST_CASE("a key at the largest sizes the API admits, with the largest identity claims, is kept and replayed",
          "[idempotency]") {
  // Tenant and client claims of 255 bytes and a 255-byte key: more than LMDB holds as one key as it
  // is (the ledger stores such a key under its digest). Was a 500 on LMDB.
  test_service svc;
  auto claims = valid_claims("u_alice");
  claims["tenant_id"] = "t" + std::string(254, 'x');
  claims["client_id"] = "a_" + std::string(253, 'y');
  claims["scopes"] = json::array{"content-lake.read", "content-lake.write"};
  auto token = make_token(claims);
  std::string key(255, 'k');
  auto first = send(svc.port(), "POST", "/v0/content-lake/works", token, key, R"({"title":"Long"})");
  REQUIRE(first);
  CHECK(first->status == 201);
  auto again = send(svc.port(), "POST", "/v0/content-lake/works", token, key, R"({"title":"Long"})");
  REQUIRE(again);
  CHECK(again->status == 201);
  CHECK(again->body == first->body);
  CHECK(again->header("idempotent-replayed") == "true");
  // Another key differing in its last byte is another request.
  auto other = send(svc.port(), "POST", "/v0/content-lake/works", token, std::string(254, 'k') + "j", R"({"title":"Long"})");
  REQUIRE(other);
  CHECK(other->status == 201);
  CHECK(other->header("idempotent-replayed").empty());
  CHECK(other->body != first->body);
}
