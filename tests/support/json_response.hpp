#pragma once
// The JSON object a response carries (the test fails when there was no response).

#include "tests/support/http_client.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <optional>

namespace cl::testing {

inline boost::json::object json_object_of(const std::optional<http_response>& r) {
  REQUIRE(r);
  return boost::json::parse(r->body).as_object();
}

}  // namespace cl::testing
