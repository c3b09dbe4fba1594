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
