// The rules of a blob upload request: what POST /blobs/uploads accepts and how an upload is laid
// out in parts.

#include "domain/blob_upload.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace cl::domain;

namespace {

std::variant<upload_request, api_error> parse(const std::string& body, upload_limits limits = {}) {
  auto r = parse_upload_request(boost::json::parse(body).as_object());
  if (auto* ok = std::get_if<upload_request>(&r))
    if (auto over = over_limits(*ok, limits)) return *over;
  return r;
}

api_error refusal(const std::string& body, upload_limits limits = {}) {
  auto r = parse(body, limits);
  REQUIRE(std::holds_alternative<api_error>(r));
  return std::get<api_error>(r);
}

}  // namespace

TEST_CASE("an upload request names a size, a media type and optionally the blob it versions", "[blobs]") {
  auto r = std::get<upload_request>(parse(R"({"size": 1048576, "content_type": "image/png"})"));
  CHECK(r.size == 1048576);
  CHECK(r.content_type == "image/png");
  CHECK_FALSE(r.blob_id);
  CHECK(std::get<upload_request>(parse(R"({"size":1,"content_type":"text/plain; charset=utf-8","blob_id":"blb_1"})")).blob_id == "blb_1");

  CHECK(refusal(R"({"size": 0, "content_type": "image/png"})").details.at(0).field == "/size");
  CHECK(refusal(R"({"size": -5, "content_type": "image/png"})").details.at(0).field == "/size");
  CHECK(refusal(R"({"size": 1.5, "content_type": "image/png"})").details.at(0).field == "/size");
  CHECK(refusal(R"({"content_type": "image/png"})").details.at(0).field == "/size");
  CHECK(refusal(R"({"size": 10, "content_type": "png"})").details.at(0).field == "/content_type");
  CHECK(refusal(R"({"size": 10, "content_type": "image/png\r\nX: y"})").details.at(0).field == "/content_type");
  CHECK(refusal(R"({"size": 10, "content_type": "image/png", "blob_id": "res_1"})").details.at(0).field == "/blob_id");
  CHECK(refusal(R"({"size": 10, "content_type": "image/png", "name": "x"})").details.at(0).field == "/name");
  upload_limits small;
  small.max_blob_bytes = 100;
  auto over = refusal(R"({"size": 101, "content_type": "image/png"})", small);
  CHECK(over.id == error_id::limit_exceeded);
  CHECK(std::holds_alternative<upload_request>(parse(R"({"size": 100, "content_type": "image/png"})", small)));
}

TEST_CASE("uploads below the threshold are one PUT; above it, parts of part_size with a shorter last", "[blobs]") {
  upload_limits limits;  // 64 MiB threshold, 16 MiB parts
  auto single = layout_upload(64ull * 1024 * 1024 - 1, limits);
  CHECK_FALSE(single.multipart);
  CHECK(single.parts(1, 100).empty());
  auto multi = layout_upload(100ull << 20, limits);
  REQUIRE(multi.multipart);
  CHECK(multi.part_count == 7);
  auto parts = multi.parts(1, 100);
  REQUIRE(parts.size() == 7);
  CHECK(parts.front().size == 16ull << 20);
  CHECK(parts.back().number == 7);
  CHECK(parts.back().size == (100ull << 20) - 6 * (16ull << 20));
  CHECK(multi.parts(6, 100).size() == 2);  // resuming from part 6
  CHECK(multi.parts(8, 100).empty());
}

TEST_CASE("a blob that would need more than 10,000 parts gets larger parts, never more parts", "[blobs]") {
  upload_limits limits;
  auto huge = layout_upload(50ull << 30, limits);  // 50 GiB at 16 MiB would be 3,200 parts: fine
  CHECK(huge.part_size == 16ull << 20);
  limits.max_blob_bytes = 1ull << 40;
  auto bigger = layout_upload(200ull << 30, limits);  // 200 GiB: 12,800 parts at 16 MiB
  CHECK(bigger.part_count <= 10000);
  CHECK(bigger.part_size % (1 << 20) == 0);
  CHECK(bigger.parts(1, 100).size() == 100);  // at most 100 URLs at once
  std::uint64_t total = 0;
  for (int from = 1; from <= bigger.part_count; from += 100)
    for (const auto& p : bigger.parts(from, 100)) total += p.size;
  CHECK(total == 200ull << 30);
}

TEST_CASE("active content types download as attachments", "[blobs]") {
  using cl::domain::active_content_type;
  for (const char* t : {"text/html", "TEXT/HTML; charset=utf-8", "image/svg+xml", "application/xhtml+xml", "text/xml",
                        "application/javascript", "application/pdf", "application/atom+xml"})
    CHECK(active_content_type(t));
  for (const char* t : {"image/png", "image/jpeg", "application/octet-stream", "text/plain", "audio/mpeg", "video/mp4",
                        "application/json"})
    CHECK_FALSE(active_content_type(t));
}
