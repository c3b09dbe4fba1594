// Several nodes on one PostgreSQL database (issue 42), in one process: two services started on the
// same records and the same secrets file, each with its own data dir (its own search index). What
// one node hands out, another continues.

#include "storage/identity.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <future>
#include <set>
#include <vector>

using namespace cl::testing;
namespace json = boost::json;

namespace {

/// Two nodes on one database and one secrets file.
struct two_nodes {
  temp_dir dir;
  std::string secrets = dir.path + "/cluster.secrets";
  bool written = (cl::storage::write_secrets_file(secrets), true);
  test_service a{[this](cl::config::settings& s) { node(s); }};
  test_service b{[this](cl::config::settings& s) {
    node(s);
    s.storage.postgresql_url = a.postgresql_url();
  }};

  void node(cl::config::settings& s) const {
    s.secrets_file = secrets;
    s.rate_limit.burst = 100000;
    set_option(s, "search.batch_interval_ms", "20");
  }
};

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
