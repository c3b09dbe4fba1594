// The router (every route of the service) and query-string parsing.
#include "actors/plan_body.hpp"
#include "app/groups.hpp"
#include "domain/query.hpp"
#include "http/router.hpp"
#include "tests/fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto routes = cl::app::groups().routes();
  auto f = cl::fuzz::fields(cl::fuzz::text(data, size), 3);
  (void)cl::http::match_route(routes, f[0], f[1]);
  std::string segment;
  (void)cl::http::percent_decode_segment(f[1], segment);
  (void)cl::domain::decode_query_component(f[2]);
  (void)cl::domain::repeated_parameter(f[2]);
  (void)cl::actors::query_param(f[2], "page_size");
  return 0;
}
