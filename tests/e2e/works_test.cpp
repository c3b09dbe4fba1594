// Works: create, read, list with pagination, tenancy, validation, durability across restarts.

#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <set>

using namespace cl::testing;
namespace json = boost::json;

namespace {

const std::string rw_scopes = "content-lake.read content-lake.write";

}  // namespace

TEST_CASE("a created Work is answered 201 with Location and read back identical", "[works]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto created = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"The Tides of Brittany","description":"Field guide"})");
  REQUIRE(created);
  REQUIRE(created->status == 201);
  auto work = json::parse(created->body).as_object();
  std::string id{work.at("id").as_string()};
  CHECK(id.rfind("wk_", 0) == 0);
  CHECK(id.size() == 3 + 29);
  CHECK(work.at("title").as_string() == "The Tides of Brittany");
  CHECK(work.at("created").as_string() == work.at("updated").as_string());
  CHECK(created->header("location") == "/v0/content-lake/works/" + id);
  auto read = get_with_token(svc.port(), "/v0/content-lake/works/" + id, token);
  REQUIRE(read);
  CHECK(read->status == 200);
  CHECK(read->body == created->body);
  CHECK(read->header("cache-control") == "private, max-age=1");
}

TEST_CASE("creating a Work needs content-lake.write", "[works]") {
  test_service svc;
  auto r = post_json(svc.port(), "/v0/content-lake/works", token_with("content-lake.read"), R"({"title":"x"})");
  REQUIRE(r);
  CHECK(r->status == 403);
  CHECK(reason_of(*r) == "SCOPE_MISSING");
}

TEST_CASE("invalid Work bodies are refused with details", "[works]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  auto r = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"x"})", "text/plain");
  REQUIRE(r);
  CHECK(r->status == 415);
  CHECK(reason_of(*r) == "UNSUPPORTED_MEDIA_TYPE");
  r = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":)");
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(reason_of(*r) == "INVALID_ARGUMENT");
  r = post_json(svc.port(), "/v0/content-lake/works", token, R"({"description":"no title"})");
  REQUIRE(r);
  CHECK(r->status == 400);
  auto details = json::parse(r->body).as_object().at("error").as_object().at("details").as_array();
  REQUIRE(details.size() == 1);
  CHECK(details[0].as_object().at("field").as_string() == "/title");
  r = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"x","colour":"blue"})");
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(r->body.find("/colour") != std::string::npos);
  r = post_json(svc.port(), "/v0/content-lake/works", token, "[1,2]");
  REQUIRE(r);
  CHECK(r->status == 400);
}

TEST_CASE("a missing Work is 404, and so is another tenant's Work", "[works]") {
  test_service svc;
  auto mine = token_with(rw_scopes, "t_test");
  auto theirs = token_with(rw_scopes, "t_other");
  auto r = get_with_token(svc.port(), "/v0/content-lake/works/wk_doesnotexist", mine);
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(reason_of(*r) == "WORK_NOT_FOUND");
  auto created = post_json(svc.port(), "/v0/content-lake/works", theirs, R"({"title":"Theirs"})");
  REQUIRE(created);
  REQUIRE(created->status == 201);
  std::string id{json::parse(created->body).as_object().at("id").as_string()};
  r = get_with_token(svc.port(), "/v0/content-lake/works/" + id, mine);
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK(reason_of(*r) == "WORK_NOT_FOUND");
}

TEST_CASE("listing Works pages with opaque tokens bound to tenant and filters", "[works][pagination]") {
  test_service svc;
  auto token = token_with(rw_scopes);
  std::set<std::string> created;
  for (int i = 0; i < 5; ++i) {
    auto r = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"Work )" + std::to_string(i) + "\"}");
    REQUIRE(r);
    REQUIRE(r->status == 201);
    created.insert(std::string{json::parse(r->body).as_object().at("id").as_string()});
  }
  REQUIRE(post_json(svc.port(), "/v0/content-lake/works", token_with(rw_scopes, "t_other"), R"({"title":"elsewhere"})")->status == 201);

  std::set<std::string> seen;
  std::string page_token;
  int pages = 0;
  do {
    std::string target = "/v0/content-lake/works?page_size=2";
    if (!page_token.empty()) target += "&page_token=" + page_token;
    auto r = get_with_token(svc.port(), target, token);
    REQUIRE(r);
    REQUIRE(r->status == 200);
    auto page = json::parse(r->body).as_object();
    for (const auto& w : page.at("works").as_array()) seen.insert(std::string{w.as_object().at("id").as_string()});
    CHECK(page.at("works").as_array().size() <= 2);
    page_token = page.contains("next_page_token") ? std::string{page.at("next_page_token").as_string()} : "";
    ++pages;
  } while (!page_token.empty() && pages < 10);
  CHECK(pages == 3);
  CHECK(seen == created);

  auto first = json::parse(get_with_token(svc.port(), "/v0/content-lake/works?page_size=2", token)->body).as_object();
  std::string next{first.at("next_page_token").as_string()};
  auto foreign = get_with_token(svc.port(), "/v0/content-lake/works?page_token=" + next, token_with(rw_scopes, "t_other"));
  REQUIRE(foreign);
  CHECK(foreign->status == 400);
  CHECK(reason_of(*foreign) == "PAGE_TOKEN_MISMATCH");
  std::string tampered = next;
  tampered[tampered.size() / 2] = tampered[tampered.size() / 2] == 'A' ? 'B' : 'A';
  auto bad = get_with_token(svc.port(), "/v0/content-lake/works?page_token=" + tampered, token);
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(reason_of(*bad) == "PAGE_TOKEN_INVALID");
  auto negative = get_with_token(svc.port(), "/v0/content-lake/works?page_size=-1", token);
  REQUIRE(negative);
  CHECK(negative->status == 400);
  CHECK(reason_of(*negative) == "INVALID_ARGUMENT");
  auto huge = get_with_token(svc.port(), "/v0/content-lake/works?page_size=5000", token);
  REQUIRE(huge);
  CHECK(json::parse(huge->body).as_object().at("works").as_array().size() == 5);
  CHECK_FALSE(json::parse(huge->body).as_object().contains("next_page_token"));
}

TEST_CASE("Works survive a stop and start byte for byte", "[works][restart]") {
  temp_dir data;
  auto token = token_with(rw_scopes);
  std::string id, body;
  {
    test_service svc{[&](cl::config::settings& s) { s.data_dir = data.path; }};
    auto r = post_json(svc.port(), "/v0/content-lake/works", token, R"({"title":"Durable"})");
    REQUIRE(r);
    REQUIRE(r->status == 201);
    body = r->body;
    id = std::string{json::parse(body).as_object().at("id").as_string()};
    CHECK(svc.stop_and_wait() == 0);
  }
  test_service again{[&](cl::config::settings& s) { s.data_dir = data.path; }};
  auto r = get_with_token(again.port(), "/v0/content-lake/works/" + id, token);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == body);
  // Page tokens stay valid across restarts (the key lives in the data dir).
  REQUIRE(post_json(again.port(), "/v0/content-lake/works", token, R"({"title":"Second"})")->status == 201);
  auto page = json::parse(get_with_token(again.port(), "/v0/content-lake/works?page_size=1", token)->body).as_object();
  REQUIRE(page.contains("next_page_token"));
}
