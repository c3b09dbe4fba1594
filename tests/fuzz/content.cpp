// Content-format validation, Markdown rendering and the text extractors over any JSON value.
#include "domain/content_format.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <boost/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::system::error_code ec;
  auto v = boost::json::parse(cl::fuzz::text(data, size), ec);
  if (ec) return 0;
  if (!cl::domain::validate_content(v, "https://api.example/v0/content-lake")) {
    (void)cl::domain::render_markdown(v);
    (void)cl::domain::search_text(v);
    (void)cl::domain::blob_references(v, "https://api.example/v0/content-lake");
  }
  (void)cl::domain::referenced_blobs_in(cl::fuzz::text(data, size));
  return 0;
}
