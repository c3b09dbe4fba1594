// The PostgreSQL backend's hot-record cache on its own: bounded, least recently read out first, and
// a fill that raced a drop of its key is not kept.

#include "storage/postgresql/hot_records.hpp"

#include <catch2/catch.hpp>

using cl::storage::resource_header;
using cl::storage::pg::hot_records;

namespace {

hot_records::entry record(std::string body, std::string version = "ver_1") {
  return {std::move(body), resource_header{"wrk_1", "CHAPTER", "en", std::move(version), {"blb_1"}}};
}

}  // namespace

TEST_CASE("the hot-record cache keeps what was read and lets go of what was dropped", "[storage]") {
  hot_records hot{1 << 20};
  auto k = hot_records::key("t1", "res_a");
  CHECK_FALSE(hot.find(k));
  hot.put(k, record("{\"a\":1}"), hot.reserve(k));
  auto found = hot.find(k);
  REQUIRE(found);
  CHECK(found->record == "{\"a\":1}");
  CHECK(found->header == resource_header{"wrk_1", "CHAPTER", "en", "ver_1", {"blb_1"}});
  // The same id in another tenant is another record.
  CHECK_FALSE(hot.find(hot_records::key("t2", "res_a")));
  hot.drop(k);
  CHECK_FALSE(hot.find(k));
  CHECK(hot.size() == 0);
  CHECK(hot.bytes() == 0);
}

TEST_CASE("a read that raced a commit does not fill the hot-record cache", "[storage]") {
  hot_records hot{1 << 20};
  auto k = hot_records::key("t1", "res_a");
  auto seen = hot.reserve(k);   // the reader asks, misses, goes to the database ...
  hot.drop(k);                     // ... a commit writes the Resource and drops it ...
  hot.put(k, record("{\"old\":true}"), seen);  // ... the reader comes back with what it read before
  CHECK_FALSE(hot.find(k));
  // The next read, begun after the drop, fills it.
  hot.put(k, record("{\"new\":true}", "ver_2"), hot.reserve(k));
  REQUIRE(hot.find(k));
  CHECK(hot.find(k)->header.version == "ver_2");
  // A drop of another key does not stop a fill (reservations are per key), even in the same shard.
  hot_records one_shard{1 <<20, 1};
  auto other = hot_records::key("t1", "res_b");
  auto token = one_shard.reserve(k);
  one_shard.drop(other);
  one_shard.put(k, record("{\"a\":1}"), token);
  CHECK(one_shard.find(k));
  // clear() (the log was pruned past what the follower read) counts as a drop for every key.
  seen = hot.reserve(k);
  hot.clear();
  hot.put(k, record("{\"old\":true}"), seen);
  CHECK_FALSE(hot.find(k));
}

TEST_CASE("the hot-record cache holds its bound, the least recently read leaving first", "[storage]") {
  // One shard, room for a few records of 1,000 bytes.
  hot_records hot{5000, 1};
  std::string body(1000, 'x');
  for (int i = 0; i < 4; ++i) {
    auto k = hot_records::key("t1", "res_" + std::to_string(i));
    hot.put(k, record(body), hot.reserve(k));
  }
  CHECK(hot.size() == 4);
  CHECK(hot.find(hot_records::key("t1", "res_0")));  // read lately: kept when the next one comes
  auto k = hot_records::key("t1", "res_4");
  hot.put(k, record(body), hot.reserve(k));
  CHECK(hot.bytes() <= 5000);
  CHECK(hot.find(hot_records::key("t1", "res_0")));
  CHECK_FALSE(hot.find(hot_records::key("t1", "res_1")));  // the least recently read went
  CHECK(hot.find(k));
  // A record larger than the bound is answered but never kept.
  auto big = hot_records::key("t1", "res_big");
  hot.put(big, record(std::string(6000, 'y')), hot.reserve(big));
  CHECK_FALSE(hot.find(big));
  hot_records none{0};
  none.put(k, record("{}"), none.reserve(k));
  CHECK(none.size() == 0);
}
