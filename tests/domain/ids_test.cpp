#include "domain/ids.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <set>

using namespace cl::domain;

TEST_CASE("ids carry the prefix, a millisecond time and 96 random bits in lowercase base32hex", "[ids]") {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = random_id("res_");
    REQUIRE(id.rfind("res_", 0) == 0);
    REQUIRE(id.size() == 4 + 29);
    for (char c : id.substr(4)) CHECK(((c >= '0' && c <= '9') || (c >= 'a' && c <= 'v')));
    seen.insert(id);
  }
  CHECK(seen.size() == 1000);
}

TEST_CASE("an id made in a later millisecond sorts after an earlier one", "[ids]") {
  auto ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  };
  auto first = random_id("wk_");
  auto made = ms();
  while (ms() == made) {
  }  // wait for the clock's next millisecond
  auto second = random_id("wk_");
  CHECK(first < second);
  // The encoding sorts like the bytes across every digit boundary (base32hex, not base32).
  for (unsigned v = 0; v < 255; ++v) {
    std::string a(1, static_cast<char>(v)), b(1, static_cast<char>(v + 1));
    CHECK(base32hex_lower(a) < base32hex_lower(b));
  }
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

TEST_CASE("a random token is 128 bits in lowercase base32 and never repeats", "[ids]") {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto t = random_base32(16);
    CHECK(t.size() == 26);  // ceil(128 / 5)
    CHECK(t.find_first_not_of("abcdefghijklmnopqrstuvwxyz234567") == std::string::npos);
    seen.insert(t);
  }
  CHECK(seen.size() == 1000);
  CHECK_THROWS(random_base32(33));
}

TEST_CASE("the time an id was made is read back from it; anything else has none", "[ids]") {
  auto before = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto id = random_id("srch_");
  auto after = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto made = id_millis(id, "srch_");
  REQUIRE(made);
  CHECK(*made >= before);
  CHECK(*made <= after);
  CHECK_FALSE(id_millis(id, "res_"));
  CHECK_FALSE(id_millis("srch_", "srch_"));
  CHECK_FALSE(id_millis(id + "0", "srch_"));
  auto upper = id;
  upper[6] = 'Z';
  CHECK_FALSE(id_millis(upper, "srch_"));
}
