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

#include "actors/representation_cache.hpp"

TEST_CASE("a rendering is found only for the very record and rights it was made from", "[cache]") {
  representation_cache c{1 << 20};
  auto key = representation_cache::key("t_a", "res_1", "json@");
  auto made = std::make_shared<representation_cache::rendering>(representation_cache::rendering{"sha256:1", "{body}", {}, 0});
  c.insert(key, {"{record v1}", "digest", "{rights}"}, made);
  auto hit = c.find(key, {"{record v1}", "digest", "{rights}"});
  REQUIRE(hit);
  CHECK(hit->body == "{body}");
  CHECK(hit->hash == "sha256:1");
  // Another version of the record, another resolution of its rights, another tenant or rendering:
  // not found (a write or a contract change elsewhere needs no invalidation to be seen).
  CHECK_FALSE(c.find(key, {"{record v2}", "digest", "{rights}"}));
  CHECK_FALSE(c.find(key, {"{record v1}", "digest2", "{rights}"}));
  CHECK_FALSE(c.find(key, {"{record v1}", "digest", "{rights2}"}));
  CHECK_FALSE(c.find(representation_cache::key("t_b", "res_1", "json@"), {"{record v1}", "digest", "{rights}"}));
  CHECK_FALSE(c.find(representation_cache::key("t_a", "res_1", "md@"), {"{record v1}", "digest", "{rights}"}));
  // A new rendering of the key replaces the old one.
  c.insert(key, {"{record v2}", "digest", "{rights}"},
           std::make_shared<representation_cache::rendering>(representation_cache::rendering{"sha256:2", "{body2}", {}, 0}));
  CHECK(c.size() == 1);
  CHECK_FALSE(c.find(key, {"{record v1}", "digest", "{rights}"}));
  CHECK(c.find(key, {"{record v2}", "digest", "{rights}"})->hash == "sha256:2");
}

TEST_CASE("the rendering cache stays within its bytes, least recently read out first", "[cache]") {
  constexpr std::size_t budget = 256 * 1024;
  representation_cache c{budget};
  std::string record(1000, 'r');
  auto made = std::make_shared<representation_cache::rendering>(representation_cache::rendering{"h", std::string(1000, 'b'), {}, 0});
  auto first = representation_cache::key("t", "res_0", "json@");
  c.insert(first, {record, "d", "j"}, made);
  for (int i = 1; i < 2000; ++i) {
    c.insert(representation_cache::key("t", "res_" + std::to_string(i), "json@"), {record, "d", "j"}, made);
    CHECK(c.find(first, {record, "d", "j"}));  // read all along: never the one out
    CHECK(c.bytes() <= budget);
  }
  CHECK(c.size() < 2000);
  CHECK(c.size() > 50);
  // Something bigger than its shard is not kept; a cache of 0 bytes keeps nothing.
  auto huge = std::make_shared<representation_cache::rendering>(representation_cache::rendering{"h", std::string(budget, 'x'), {}, 0});
  c.insert(representation_cache::key("t", "res_huge", "json@"), {record, "d", "j"}, huge);
  CHECK_FALSE(c.find(representation_cache::key("t", "res_huge", "json@"), {record, "d", "j"}));
  representation_cache off{0};
  off.insert(first, {record, "d", "j"}, made);
  CHECK_FALSE(off.find(first, {record, "d", "j"}));
  // The headers a rendering keeps count against the budget as its body does.
  representation_cache bare{budget}, headed{budget};
  auto with_headers = std::make_shared<representation_cache::rendering>(*made);
  with_headers->headers.assign(8, {"Surrogate-Key", std::string(500, 'k')});
  bare.insert(first, {record, "d", "j"}, made);
  headed.insert(first, {record, "d", "j"}, with_headers);
  CHECK(headed.bytes() >= bare.bytes() + 8 * (13 + 500));
}
