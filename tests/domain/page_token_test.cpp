#include "domain/base64url.hpp"
#include "domain/page_token.hpp"

#include <catch2/catch.hpp>

using namespace cl::domain;

namespace {

const page_token_codec& codec() {
  static const page_token_codec c{std::string(32, 'k')};
  return c;
}

}  // namespace

TEST_CASE("a page token round-trips for its tenant and query and is URL-safe", "[page_token]") {
  auto token = codec().issue({"t_one", "type=DOCUMENT", "res_123"});
  CHECK(token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == std::string::npos);
  auto opened = codec().open(token, "t_one", "type=DOCUMENT");
  REQUIRE(std::holds_alternative<std::string>(opened));
  CHECK(std::get<std::string>(opened) == "res_123");
  CHECK(token.find("res_123") == std::string::npos);  // opaque: not the key in clear base64 either
}

TEST_CASE("a tampered token is PAGE_TOKEN_INVALID", "[page_token]") {
  auto token = codec().issue({"t_one", "", "res_123"});
  auto raw = *base64url_decode(token);
  raw[10] ^= 1;
  auto opened = codec().open(base64url_encode(raw), "t_one", "");
  REQUIRE(std::holds_alternative<api_error>(opened));
  CHECK(std::get<api_error>(opened).id == error_id::page_token_invalid);
  for (std::string junk : {std::string{}, std::string{"x"}, std::string{"!!!"}, std::string(5000, 'A')}) {
    auto r = codec().open(junk, "t_one", "");
    REQUIRE(std::holds_alternative<api_error>(r));
    CHECK(std::get<api_error>(r).id == error_id::page_token_invalid);
  }
  page_token_codec other{std::string(32, 'z')};
  auto foreign_key = other.open(token, "t_one", "");
  REQUIRE(std::holds_alternative<api_error>(foreign_key));
  CHECK(std::get<api_error>(foreign_key).id == error_id::page_token_invalid);
}

TEST_CASE("another tenant's or another query's token is PAGE_TOKEN_MISMATCH", "[page_token]") {
  auto token = codec().issue({"t_one", "type=DOCUMENT", "res_123"});
  auto foreign = codec().open(token, "t_two", "type=DOCUMENT");
  REQUIRE(std::holds_alternative<api_error>(foreign));
  CHECK(std::get<api_error>(foreign).id == error_id::page_token_mismatch);
  auto changed = codec().open(token, "t_one", "type=IMAGE");
  REQUIRE(std::holds_alternative<api_error>(changed));
  CHECK(std::get<api_error>(changed).id == error_id::page_token_mismatch);
}

TEST_CASE("filters bind regardless of their order", "[page_token]") {
  CHECK(canonical_query({{"type", "A"}, {"language", "en"}}) == canonical_query({{"language", "en"}, {"type", "A"}}));
}

TEST_CASE("page_size: default 50, capped at 1000, negative refused", "[page_token]") {
  CHECK(std::get<std::size_t>(page_size_from("")) == 50);
  CHECK(std::get<std::size_t>(page_size_from("0")) == 50);
  CHECK(std::get<std::size_t>(page_size_from("7")) == 7);
  CHECK(std::get<std::size_t>(page_size_from("5000")) == 1000);
  CHECK(std::get<std::size_t>(page_size_from("99999999999999999999999999")) == 1000);
  CHECK(std::get<api_error>(page_size_from("+5")).id == error_id::invalid_argument);
  CHECK(std::get<api_error>(page_size_from("-1")).id == error_id::invalid_argument);
  CHECK(std::get<api_error>(page_size_from("ten")).id == error_id::invalid_argument);
}
