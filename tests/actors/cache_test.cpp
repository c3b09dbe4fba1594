// The caches that concern actors share with coordinators.

#include "actors/shared_cache.hpp"
#include "actors/token_cache.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

using namespace cl::actors;

TEST_CASE("a shared cache answers until an entry's validity ends", "[cache]") {
  shared_cache<int> c{100};
  c.insert("a", 1, 50, 10);
  CHECK(c.find("a", 10) == 1);
  CHECK(c.find("a", 49) == 1);
  CHECK_FALSE(c.find("a", 50));
  CHECK_FALSE(c.find("b", 10));
  c.insert("expired", 2, 10, 10);  // already over: not kept
  CHECK(c.size() == 1);
  c.clear();
  CHECK_FALSE(c.find("a", 10));
}

TEST_CASE("a shared cache stays within its capacity", "[cache]") {
  shared_cache<int> c{32};
  for (int i = 0; i < 10000; ++i) c.insert("k" + std::to_string(i), i, 1000, 0);
  CHECK(c.size() <= 32);
  // The most recent insert is always kept.
  CHECK(c.find("k9999", 0) == 9999);
  shared_cache<int> off{0};
  off.insert("a", 1, 50, 10);
  CHECK_FALSE(off.find("a", 10));
}

TEST_CASE("the token cache finds a token only by its exact bytes", "[cache]") {
  token_cache c{10};
  cl::domain::principal who;
  who.subject = "u_alice";
  who.tenant_id = "t_one";
  c.insert("header.payload.signature", who, 200, 100);
  auto hit = c.find("header.payload.signature", 150);
  REQUIRE(hit);
  CHECK(hit->subject == "u_alice");
  CHECK_FALSE(c.find("header.payload.signaturf", 150));
  CHECK_FALSE(c.find("header.payload.signature", 200));
}

TEST_CASE("a shared cache read and written from several threads keeps each key's own value", "[cache]") {
  // Coordinators on every scheduler thread read while the owning actor writes: what a reader gets
  // is the value written for that key (scripts/check-sanitizers tsan runs this for races).
  shared_cache<std::string> c{64};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) {
        auto key = "k" + std::to_string((i * 7 + t) % 200);
        if (i % 3 == 0) c.insert(key, "v" + key, 1000, 0);
        auto hit = c.find(key, 0);
        if (hit && *hit != "v" + key) ++wrong;
        if (i % 1000 == 999) c.clear();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(c.size() <= 64);
}
