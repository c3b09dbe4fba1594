#include "domain/ids.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace cl::domain;

TEST_CASE("random ids carry the prefix and 128 bits in lowercase base32", "[ids]") {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = random_id("res_");
    REQUIRE(id.rfind("res_", 0) == 0);
    REQUIRE(id.size() == 4 + 26);
    for (char c : id.substr(4)) CHECK(((c >= 'a' && c <= 'z') || (c >= '2' && c <= '7')));
    seen.insert(id);
  }
  CHECK(seen.size() == 1000);
}

TEST_CASE("client request ids are echoed only when well-formed", "[ids]") {
  CHECK(is_valid_request_id("abc-123_x.y:z"));
  CHECK(is_valid_request_id(std::string(128, 'a')));
  CHECK_FALSE(is_valid_request_id(""));
  CHECK_FALSE(is_valid_request_id(std::string(129, 'a')));
  CHECK_FALSE(is_valid_request_id("has space"));
  CHECK_FALSE(is_valid_request_id("line\nbreak"));
  CHECK_FALSE(is_valid_request_id("quote\""));
  CHECK(is_valid_request_id(new_request_id()));
}
