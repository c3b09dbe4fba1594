// Field-mask parsing, and the mask applied to a full Resource.
#include "domain/field_mask.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <boost/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto full = boost::json::parse(
    R"({"id":"res_1","title":"T","type":"ARTICLE","language":"en","content":{"format":"cl.content/1","blocks":[]},
        "rights":{"usage":[{"usage_type":"ACCESS","status":"PERMITTED"}]},"entities":{"people":[{"name":"A"}]}})").as_object();
  auto parsed = cl::domain::parse_field_mask(cl::fuzz::text(data, size), cl::domain::resource_fields());
  if (auto* mask = std::get_if<cl::domain::field_mask>(&parsed)) (void)cl::domain::apply_resource_mask(full, *mask);
  return 0;
}
