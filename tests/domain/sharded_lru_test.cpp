// The byte-bounded sharded LRU both caches are built on (domain/sharded_lru.hpp).

#include "domain/sharded_lru.hpp"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace {

struct text_cost {
  std::size_t operator()(std::string_view key, const std::string& v) const { return key.size() + v.size(); }
};
using lru = cl::domain::sharded_lru<std::string, text_cost>;

std::optional<std::string> get(const lru& c, std::string_view key) {
  std::optional<std::string> out;
  c.read(key, [&](const std::string& v) {
    out = v;
    return true;
  });
  return out;
}

}  // namespace

TEST_CASE("within its budget the least recently read goes first", "[lru]") {
  lru c{30, 1};  // one shard of 30 bytes
  c.insert("a", std::string(9, 'a'));  // 10 bytes each
  c.insert("b", std::string(9, 'b'));
  c.insert("c", std::string(9, 'c'));
  CHECK(c.bytes() == 30);
  CHECK(get(c, "a"));  // read lately: b is now the oldest
  c.insert("d", std::string(9, 'd'));
  CHECK(c.size() == 3);
  CHECK_FALSE(get(c, "b"));
  CHECK(get(c, "a"));
  CHECK(get(c, "c"));
  CHECK(get(c, "d"));
  CHECK(c.bytes() == 30);
}

TEST_CASE("an entry bigger than its shard is never kept; a replaced entry's bytes are counted once", "[lru]") {
  lru c{64, 2};  // 32 bytes a shard
  c.insert("k", std::string(40, 'x'));
  CHECK(c.size() == 0);
  CHECK(c.bytes() == 0);
  c.insert("k", "one");
  c.insert("k", "three");
  CHECK(get(c, "k") == std::string{"three"});
  CHECK(c.bytes() == 6);
  c.erase("k");
  CHECK(c.bytes() == 0);
  CHECK_FALSE(get(c, "k"));
  CHECK(lru{0}.budget_per_shard() == 0);
}

TEST_CASE("a read that is no hit does not count as read; update sees what is there", "[lru]") {
  lru c{20, 1};
  c.insert("a", "xxxx");  // 5 bytes
  c.insert("b", "yyyy");
  CHECK_FALSE(c.read("a", [](const std::string&) { return false; }));  // a miss: a stays the oldest
  c.insert("c", std::string(9, 'z'));  // 10 bytes: 20 in all
  c.insert("d", "w");                  // 2 bytes: a goes
  CHECK_FALSE(get(c, "a"));
  bool saw = false;
  c.update("b", [&](const std::string* existing) -> std::optional<std::string> {
    saw = existing && *existing == "yyyy";
    return std::nullopt;  // left as it is
  });
  CHECK(saw);
  CHECK(get(c, "b") == std::string{"yyyy"});
  c.update("e", [](const std::string* existing) -> std::optional<std::string> {
    CHECK(existing == nullptr);
    return std::string{"new"};
  });
  CHECK(get(c, "e") == std::string{"new"});
  // 21 bytes: the least recently read (c, 10 bytes; b was read after it) went.
  CHECK(c.bytes() == 11);
  CHECK(c.count_if([](const std::string& v) { return v.size() > 3; }) == 1);
  CHECK_FALSE(get(c, "c"));
  c.clear();
  CHECK(c.size() == 0);
  CHECK(c.bytes() == 0);
}

TEST_CASE("readers of one shard do not wait for one another", "[lru]") {
  // A reader stopped inside its read (as the scheduler may stop it on a busy machine) holds up no
  // other reader of the shard: the first reader's hit waits until the second's has run. Under a lock
  // readers took alone, the second could not start and the first would give up after 5 s.
  lru c{64, 1};
  c.insert("cold", "x");
  c.insert("hot", "y");  // read last; "cold" is not, so its hit then counts it read lately alone
  for (const char* key : {"hot", "cold"}) {
    INFO(key);
    std::mutex m;
    std::condition_variable cv;
    bool first_in = false, second_in = false, first_saw_second = false;
    std::thread first{[&] {
      c.read(key, [&](const std::string&) {
        std::unique_lock lock{m};
        first_in = true;
        cv.notify_all();
        first_saw_second = cv.wait_for(lock, std::chrono::seconds{5}, [&] { return second_in; });
        return true;
      });
    }};
    {
      std::unique_lock lock{m};
      CHECK(cv.wait_for(lock, std::chrono::seconds{5}, [&] { return first_in; }));
    }
    bool second_hit = c.read(key, [&](const std::string&) {
      std::lock_guard lock{m};
      second_in = true;
      cv.notify_all();
      return true;
    });
    first.join();
    CHECK(second_hit);
    CHECK(first_saw_second);
  }
  // Both reads of "cold" counted it read lately: "hot" is now the least recently read and goes first.
  c.insert("new", std::string(56, 'n'));  // 59 bytes: room for one of the two (5 and 4) beside it
  CHECK(get(c, "new"));
  CHECK(get(c, "cold"));
  CHECK_FALSE(get(c, "hot"));
}
