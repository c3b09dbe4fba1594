#include "domain/token_bucket.hpp"

#include <catch2/catch.hpp>

using cl::domain::token_bucket;

TEST_CASE("a token bucket admits its burst, then asks for whole seconds", "[rate]") {
  token_bucket b{2.0, 3.0, 100.0};
  CHECK(b.take(100.0) == 0);
  CHECK(b.take(100.0) == 0);
  CHECK(b.take(100.0) == 0);
  int wait = b.take(100.0);
  CHECK(wait == 1);  // 0.5 s at 2/s, rounded up to a whole second
  CHECK(b.take(100.5) == 0);  // refilled one token
  CHECK(b.take(100.5) >= 1);
}

TEST_CASE("a slow rate asks for a longer wait", "[rate]") {
  token_bucket b{0.1, 1.0, 0.0};
  CHECK(b.take(0.0) == 0);
  CHECK(b.take(0.0) == 10);
  CHECK(b.take(5.0) == 5);
  CHECK(b.take(10.0) == 0);
}

TEST_CASE("a bucket refills up to its burst and no further", "[rate]") {
  token_bucket b{1.0, 2.0, 0.0};
  CHECK(b.take(0.0) == 0);
  CHECK_FALSE(b.full_at(0.0));
  CHECK(b.full_at(1000.0));
  CHECK(b.take(1000.0) == 0);
  CHECK(b.take(1000.0) == 0);
  CHECK(b.take(1000.0) >= 1);
}

TEST_CASE("tokens another node spent are charged: the bucket may owe, at most its burst", "[rate]") {
  token_bucket b{1.0, 4.0, 0.0};
  b.charge(3.0, 0.0);  // another node admitted three of this client's requests
  CHECK(b.take(0.0) == 0);
  CHECK(b.take(0.0) == 1);  // the fifth in the cluster: over the burst
  b.charge(100.0, 0.0);     // owes at most the burst (4): admits again after 5 s, not 100
  CHECK(b.take(0.0) == 5);
  CHECK(b.take(4.0) >= 1);
  CHECK(b.take(5.0) == 0);
  b.charge(-2.0, 5.0);  // nothing to give back: a negative charge changes nothing
  CHECK(b.take(5.0) >= 1);
}
