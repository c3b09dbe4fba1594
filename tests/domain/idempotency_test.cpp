// Idempotency keys: shape, request fingerprints, stored answers.

#include "domain/idempotency.hpp"

#include <catch2/catch.hpp>

using namespace cl::domain;

namespace {

api_request post(std::string body, std::string query = {}, std::string path = "/v0/content-lake/resources") {
  api_request r;
  r.method = "POST";
  r.path = std::move(path);
  r.query = std::move(query);
  r.body = std::move(body);
  return r;
}

const std::vector<std::string> scopes = {"content-lake.write", "content-lake.read"};

}  // namespace

TEST_CASE("an idempotency key is 1 to 255 visible ASCII characters", "[idempotency]") {
  CHECK_FALSE(idempotency_key_problem("4d0b6f6e-8f5a-4c39-9a63-2b7f4a1f0c55"));
  CHECK_FALSE(idempotency_key_problem(std::string(255, '!')));
  CHECK_FALSE(idempotency_key_problem("~"));
  CHECK(idempotency_key_problem(""));
  CHECK(idempotency_key_problem(std::string(256, 'a')));
  CHECK(idempotency_key_problem("a b"));
  CHECK(idempotency_key_problem("tab\there"));
  CHECK(idempotency_key_problem("caf\xc3\xa9"));
  CHECK(idempotency_key_problem(std::string{"nul\0x", 5}));
}

TEST_CASE("the fingerprint ignores JSON member order and whitespace, and query order", "[idempotency]") {
  auto a = request_fingerprint(post(R"({"title":"T","content":{"format":"x","blocks":[1,2]}})", "b=2&a=1"), "u_alice", scopes);
  auto b = request_fingerprint(post(R"( { "content" : { "blocks":[1, 2], "format":"x" }, "title":"T" } )", "a=1&b=2"),
                               "u_alice", {"content-lake.read", "content-lake.write"});
  CHECK(a == b);
  CHECK(a.rfind("sha256:", 0) == 0);
}

TEST_CASE("the fingerprint tells apart what makes a different request", "[idempotency]") {
  auto base = request_fingerprint(post(R"({"title":"T"})"), "u_alice", scopes);
  CHECK(request_fingerprint(post(R"({"title":"U"})"), "u_alice", scopes) != base);              // body
  CHECK(request_fingerprint(post(R"({"title":"T"})", "x=1"), "u_alice", scopes) != base);       // query
  CHECK(request_fingerprint(post(R"({"title":"T"})", "", "/v0/content-lake/works"), "u_alice", scopes) != base);  // path
  CHECK(request_fingerprint(post(R"({"title":"T"})"), "u_bob", scopes) != base);                // caller
  CHECK(request_fingerprint(post(R"({"title":"T"})"), "u_alice", {"content-lake.write"}) != base);  // scopes
  CHECK(request_fingerprint(post(R"([1,2])"), "u_alice", scopes) != request_fingerprint(post(R"([2,1])"), "u_alice", scopes));
  auto put = post(R"({"title":"T"})");
  put.method = "PUT";
  CHECK(request_fingerprint(put, "u_alice", scopes) != base);  // method
  // A body that is not JSON counts byte for byte.
  CHECK(request_fingerprint(post("not json "), "u_alice", scopes) != request_fingerprint(post("not json"), "u_alice", scopes));
}

TEST_CASE("a stored answer replays as sent, errors rendered, marked as a replay", "[idempotency]") {
  api_reply ok;
  ok.status = 201;
  ok.body = R"({"id":"res_1"})";
  ok.headers = {{"Location", "/v0/content-lake/resources/res_1"}, {"ETag", "\"sha256:ab\""}};
  auto stored = stored_from(ok);
  ledger_record record{"sha256:f", 1700000000000, stored};
  auto back = parse_ledger_record(ledger_record_json(record));
  REQUIRE(back);
  CHECK(back->fingerprint == "sha256:f");
  CHECK(back->created_ms == 1700000000000);
  auto replay = replay_of(back->answer);
  CHECK(replay.status == 201);
  CHECK(replay.body == ok.body);
  CHECK(replay.content_type == "application/json");
  CHECK_FALSE(replay.error);
  REQUIRE(replay.headers.size() == 3);
  CHECK(replay.headers[0] == ok.headers[0]);
  CHECK(replay.headers[1] == ok.headers[1]);
  CHECK(replay.headers[2] == std::make_pair(std::string{replay_header}, std::string{"true"}));

  auto failure = api_reply::failure(error_id::token_mismatch, "stale", {{"/update_token", "old"}});
  auto stored_failure = stored_from(failure);
  CHECK(stored_failure.status == 409);
  CHECK(stored_failure.body == render_error_body(*failure.error));
  CHECK(parse_ledger_record(ledger_record_json({"f", 1, stored_failure}))->answer.body == stored_failure.body);
  CHECK_FALSE(parse_ledger_record("{}"));
}

TEST_CASE("a stored record decides: replay the same request, refuse another, execute once expired", "[idempotency]") {
  api_reply ok;
  ok.status = 201;
  ok.body = "{}";
  auto stored = ledger_record_json({"sha256:same", 1000, stored_from(ok)});
  auto replay = look_up(stored, "sha256:same", 500, 1499);
  CHECK(replay.kind == ledger_lookup::replay);
  CHECK(replay.answer.status == 201);
  CHECK(look_up(stored, "sha256:other", 500, 1499).kind == ledger_lookup::mismatch);
  auto expired = look_up(stored, "sha256:other", 500, 1500);  // retention is exclusive
  CHECK(expired.kind == ledger_lookup::fresh);
  CHECK(expired.expired_ms == 1000);
  CHECK(look_up(std::nullopt, "sha256:same", 500, 0).kind == ledger_lookup::fresh);
  CHECK(look_up(std::string{"not a record"}, "sha256:same", 500, 0).kind == ledger_lookup::fresh);
  CHECK(key_mismatch_reply().error->id == error_id::idempotency_key_mismatch);
}
