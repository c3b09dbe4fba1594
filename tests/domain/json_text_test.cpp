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
