// The change log feeds the search index (issue 14): what a write changes is searchable after a
// catch-up, a new grant brings the document to its grantee, replaced text replaces the words,
// contract changes touch nothing, batches are bounded, and a catch-up resumes after what it applied.

#include "domain/access.hpp"
#include "domain/clock.hpp"
#include "storage/search/feed.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

std::string resource_json(const std::string& id, const std::string& title, const std::string& words) {
  return R"({"id":")" + id + R"(","version":"ver_1","title":")" + title
         + R"(","type":"ARTICLE","language":"en","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
           R"("children":[{"type":"span","text":")" + words + R"("}]}]}})";
}

mutation write_resource(std::string id, std::string title, std::string words, std::string reader) {
  return [=](write_txn& tx) {
    tx.resources().put("t1", id, resource_header{"", "ARTICLE", "en", "ver_1", {}}, resource_json(id, title, words));
    tx.grants().put("t1", cl::domain::access_grant{id, reader, cl::domain::access_role::reader, "u_admin", "2026-11-22T00:00:00Z"});
    tx.log_change(change_entry{0, "t1", change_kind::resource, id, change_op::created, 1, {}, {}, {}, 0});
    return true;
  };
}

std::vector<std::string> hits(const search_index& index, const std::string& text, const std::string& principal) {
  search_query q;
  q.tenant = "t1";
  q.text = text;
  q.principals = {principal};
  std::vector<std::string> out;
  for (const auto& h : index.search(q).hits) out.push_back(h.id);
  return out;
}

}  // namespace

TEST_CASE("the change log feeds the index: writes, grants, removals, resumption", "[search][feed]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  search_index index{dir.path + "/search"};
  store->apply({write_resource("res_1", "Tides", "spring tide at Brest", "u_a"),
                write_resource("res_2", "Winds", "mistral and tramontane", "u_b")});
  auto first = catch_up(index, *store, 1000);
  CHECK(first.changes == 2);
  CHECK(first.documents == 2);
  CHECK(hits(index, "brest", "u_a") == std::vector<std::string>{"res_1"});
  CHECK(hits(index, "brest", "u_b").empty());

  // Nothing new: nothing applied again.
  auto idle = catch_up(index, *store, 1000);
  CHECK(idle.changes == 0);
  CHECK(idle.applied == first.applied);

  // A grant to u_b, a replaced text, a contract change (touches no document), then a small batch size.
  store->apply({[](write_txn& tx) {
    tx.grants().put("t1", cl::domain::access_grant{"res_1", "u_b", cl::domain::access_role::reader, "u_admin", "x"});
    tx.log_change(change_entry{0, "t1", change_kind::resource, "res_1", change_op::granted, 2, {}, {}, {}, 0});
    tx.resources().put("t1", "res_2", resource_header{"", "ARTICLE", "en", "ver_2", {}},
                       resource_json("res_2", "Winds", "bora and sirocco"));
    tx.log_change(change_entry{0, "t1", change_kind::resource, "res_2", change_op::replaced, 2, {}, {}, {}, 0});
    tx.log_change(change_entry{0, "t1", change_kind::contract, "ctr_1", change_op::contract_changed, 2, {}, {}, {}, 0});
    return true;
  }});
  auto part = catch_up(index, *store, 2);
  CHECK(part.changes == 2);
  CHECK(hits(index, "brest", "u_b") == std::vector<std::string>{"res_1"});
  auto rest = catch_up(index, *store, 1000);
  CHECK(rest.changes == 1);
  CHECK(rest.documents == 0);  // the contract change alters no document
  CHECK(hits(index, "sirocco", "u_b") == std::vector<std::string>{"res_2"});
  CHECK(hits(index, "mistral", "u_b").empty());
  CHECK(index.documents() == 2);
  CHECK(index.applied() == store->last_change());
}

TEST_CASE("a rebuild takes every Resource from the store, starts after the last change, and replaces the index",
          "[search][feed]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({write_resource("res_1", "Tides", "spring tide", "u_a"), write_resource("res_2", "Winds", "mistral", "u_a")});
  {
    search_index stale{dir.path + "/search"};
    stale.apply({indexed_resource{"t1", "res_9", "Gone", "ARTICLE", "en", "", "spring", {"u_a"}}}, {}, 1);
  }
  auto done = rebuild_index(dir.path + "/search", *store, 1);  // one Resource per page
  CHECK(done.documents == 2);
  CHECK(done.applied == store->last_change());
  search_index index{dir.path + "/search"};
  CHECK(index.applied() == store->last_change());
  CHECK(hits(index, "spring", "u_a") == std::vector<std::string>{"res_1"});  // the stale document is gone
  CHECK(catch_up(index, *store, 1000).changes == 0);
}

TEST_CASE("a rebuild in the background goes page by page, survives a restart, and misses nothing written meanwhile",
          "[search][feed]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({write_resource("res_1", "Tides", "spring tide", "u_a"), write_resource("res_2", "Winds", "spring mistral", "u_a"),
                write_resource("res_3", "Rain", "spring rain", "u_a")});
  auto target = store->last_change();
  {
    search_index index{dir.path + "/search"};
    CHECK_FALSE(index.is_rebuilding());
    index.begin_rebuild(target);
    CHECK(index.is_rebuilding());
    auto first = rebuild_step(index, *store, 1);
    CHECK(first.documents == 1);
    CHECK_FALSE(first.done);
    CHECK(index.applied() == 0);  // nothing of the change log counts as applied until the rebuild is done
  }
  // A stop in the middle: the index says it is rebuilding, and where it was.
  search_index index{dir.path + "/search"};
  REQUIRE(index.is_rebuilding());
  auto progress = index.rebuilding();
  REQUIRE(progress);
  CHECK(progress->target == target);
  CHECK_FALSE(progress->after.id.empty());
  // A Resource written meanwhile comes through the change log after the target.
  store->apply({write_resource("res_4", "Snow", "spring snow", "u_a")});
  std::size_t pages = 0;
  for (;;) {
    ++pages;
    if (rebuild_step(index, *store, 1).done) break;
  }
  CHECK(pages == 4);  // res_2, res_3, res_4 (scanned: it is in the store), then an empty page that completes it
  CHECK_FALSE(index.is_rebuilding());
  CHECK(index.applied() == target);
  CHECK(catch_up(index, *store, 1000).changes == 1);  // res_4 again: rebuilt alike, not twice
  auto found = hits(index, "spring", "u_a");
  std::sort(found.begin(), found.end());
  CHECK(found == std::vector<std::string>{"res_1", "res_2", "res_3", "res_4"});
  CHECK(rebuild_step(index, *store, 1).done);  // nothing in progress: nothing to do
}

TEST_CASE("a batch holds text up to its byte bound: large Resources are indexed a few per commit, none lost or repeated",
          "[search][feed]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  // Five Resources of ~600 bytes of text each, and a bound of 1,000 bytes: two per commit (the one that
  // reaches the bound is the batch's last), not the five a count of 1,000 would allow.
  std::string words;
  while (words.size() < 600) words += "swell ";
  std::vector<mutation> writes;
  for (int i = 1; i <= 5; ++i) writes.push_back(write_resource("res_" + std::to_string(i), "Sea", words + "n" + std::to_string(i), "u_a"));
  store->apply(std::move(writes));
  search_index index{dir.path + "/search"};
  std::vector<std::size_t> per_commit;
  for (;;) {
    auto step = catch_up(index, *store, 1000, 1000);
    if (step.changes == 0) break;
    per_commit.push_back(step.documents);
    CHECK(step.more == (index.applied() < store->last_change()));
  }
  CHECK(per_commit == std::vector<std::size_t>{2, 2, 1});
  CHECK(index.documents() == 5);
  CHECK(hits(index, "swell", "u_a").size() == 5);
  // One Resource larger than the bound still goes (alone): a bound never stalls the index.
  store->apply({write_resource("res_6", "Big", words + words, "u_a")});
  auto big = catch_up(index, *store, 1000, 10);
  CHECK(big.documents == 1);
  CHECK(hits(index, "n1", "u_a").size() == 1);

  // A rebuild pages by the same bound, and misses none.
  index.begin_rebuild(store->last_change());
  std::vector<std::size_t> per_page;
  for (;;) {
    auto step = rebuild_step(index, *store, 1000, 1000);
    per_page.push_back(step.documents);
    if (step.done) break;
  }
  CHECK(per_page == std::vector<std::size_t>{2, 2, 2});  // res_1..res_6 in key order; the last page holds the rest
  CHECK(hits(index, "swell", "u_a").size() == 6);
}

TEST_CASE("an index the change log was trimmed past is told so, not fed what is left", "[search][feed]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  search_index index{dir.path + "/search"};
  store->apply({write_resource("res_1", "Tides", "spring tide at Brest", "u_a")});
  catch_up(index, *store, 1000);
  CHECK(log_continues_after(*store, index.applied()));
  store->apply({write_resource("res_2", "Winds", "mistral", "u_a"), write_resource("res_3", "Rain", "drizzle", "u_a")});
  CHECK(log_continues_after(*store, index.applied()));
  // No consumer holds the log: retention trims all but the newest entry, res_2's among them.
  store->apply({cl::storage::prune_changes(cl::domain::now_ms() + 1000, 100)});
  CHECK_FALSE(log_continues_after(*store, index.applied()));
  CHECK_THROWS_AS(catch_up(index, *store, 1000), change_log_gap);
  CHECK(hits(index, "mistral", "u_a").empty());
  CHECK(index.applied() == 1);
}
