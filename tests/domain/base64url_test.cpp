#include "domain/base64url.hpp"

#include <catch2/catch.hpp>

using namespace cl::domain;

TEST_CASE("base64url round-trips every length without padding", "[base64url]") {
  std::string bytes;
  for (int i = 0; i < 70; ++i) {
    auto enc = base64url_encode(bytes);
    CHECK(enc.find('=') == std::string::npos);
    CHECK(enc.find('+') == std::string::npos);
    CHECK(enc.find('/') == std::string::npos);
    auto dec = base64url_decode(enc);
    REQUIRE(dec);
    CHECK(*dec == bytes);
    bytes.push_back(static_cast<char>(i * 37 + 250));
  }
}

TEST_CASE("base64url matches RFC 4648 vectors", "[base64url]") {
  CHECK(base64url_encode("f") == "Zg");
  CHECK(base64url_encode("fo") == "Zm8");
  CHECK(base64url_encode("foo") == "Zm9v");
  CHECK(base64url_encode("\xfb\xff") == "-_8");
}

TEST_CASE("base64url rejects padding, foreign characters and impossible lengths", "[base64url]") {
  CHECK_FALSE(base64url_decode("Zg=="));
  CHECK_FALSE(base64url_decode("Zm9v+A"));
  CHECK_FALSE(base64url_decode("Zm9v/A"));
  CHECK_FALSE(base64url_decode("Z"));
  CHECK_FALSE(base64url_decode("Zh"));  // non-zero leftover bits: not canonical
  CHECK(base64url_decode("") == std::string{});
}
