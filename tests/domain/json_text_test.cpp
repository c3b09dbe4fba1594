#include "domain/json_text.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <limits>

using cl::domain::json_decimal;

TEST_CASE("json_decimal writes plain decimals: no exponent, no trailing zeros", "[json]") {
  CHECK(json_decimal(80.8) == "80.8");
  CHECK(json_decimal(3.0) == "3");
  CHECK(json_decimal(0.0125) == "0.0125");
  CHECK(json_decimal(0.00001) == "0");  // below the 4 places asked
  CHECK(json_decimal(123456.78912) == "123456.7891");
  CHECK(json_decimal(-2.5) == "-2.5");
  CHECK(json_decimal(-0.00001) == "0");
  CHECK(json_decimal(std::numeric_limits<double>::quiet_NaN()) == "0");
  CHECK(json_decimal(std::numeric_limits<double>::infinity()) == "0");
  CHECK(json_decimal(1e30).find('e') == std::string::npos);
  CHECK(json_decimal(1e30).find('E') == std::string::npos);
  // Whatever it writes is a JSON number of the same value, to the places asked.
  for (double v : {0.5, 17.25, 9.999999, 1e-3, 42.0}) {
    auto parsed = boost::json::parse(json_decimal(v));
    CHECK(parsed.to_number<double>() == Approx(v).margin(1e-4));
  }
}

TEST_CASE("json_string escapes what JSON requires and control bytes, and keeps every other byte", "[json]") {
  using cl::domain::json_string;
  CHECK(json_string("") == "\"\"");
  CHECK(json_string("plain text, é and 日本") == "\"plain text, é and 日本\"");
  CHECK(json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json_string("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
  CHECK(json_string(std::string{"x\0y", 3}) == "\"x\\u0000y\"");
  CHECK(json_string("\x1b[31m\x7f") == "\"\\u001b[31m\\u007f\"");
  CHECK(json_string("\"") == "\"\\\"\"");  // an escape first and last, with no run around it
  // Every byte value, as text boost::json reads back to the same bytes.
  std::string all;
  for (int c = 1; c < 256; ++c) all.push_back(static_cast<char>(c));
  all = "start" + all + "end";
  std::string valid_utf8;
  for (char c : all)
    if (static_cast<unsigned char>(c) < 0x80) valid_utf8.push_back(c);
  CHECK(boost::json::parse(json_string(valid_utf8)).as_string() == valid_utf8);
}
