// The change-log position of read-your-writes (issue 42): one spelling per position, nothing else
// accepted.

#include "domain/position.hpp"

#include <catch2/catch.hpp>

using namespace cl::domain;

TEST_CASE("a position reads back as the sequence it was made from, and only its own spelling does", "[position]") {
  for (std::uint64_t seq : {0ull, 1ull, 42ull, 9223372036854775807ull}) CHECK(parse_position(format_position(seq)) == seq);
  for (const char* bad : {"", "p", "42", "P42", "p-1", "p+1", "p042", "p 42", "p42 ", "p4x", "p9223372036854775808",
                          "p99999999999999999999", "q42"})
    CHECK_FALSE(parse_position(bad));
}
