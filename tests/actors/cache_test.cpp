// The caches that concern actors share with coordinators.

#include "actors/shared_cache.hpp"
#include "actors/token_cache.hpp"

#include <catch2/catch.hpp>

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
