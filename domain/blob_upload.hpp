#pragma once
/// The rules of a blob upload request (spec 4.4, issue 13), pure: what `POST /blobs/uploads`
/// accepts, and how an upload of a given size is laid out (one presigned PUT, or parts of a
/// multipart upload). The broker actor applies them; unit tests pin them.

#include "domain/errors.hpp"

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::domain {

/// The limits of uploads (config `blobs.*`).
struct upload_limits {
  std::uint64_t multipart_threshold = 64ull << 20;  ///< at or above: MULTIPART
  std::uint64_t part_size = 16ull << 20;            ///< every part but the last
  std::uint64_t max_blob_bytes = 50ull << 30;
  std::uint64_t max_parts = 10000;
  std::size_t parts_per_answer = 100;               ///< URLs handed out at once
};

/// Whether a browser would run or render active content served as `content_type` (HTML, XHTML,
/// SVG, XML, JavaScript, PDF, Flash): downloads of such blobs are served as attachments, so a blob
/// never runs in the object store's origin. Parameters (`; charset=...`) and case are ignored.
bool active_content_type(std::string_view content_type);

/// A validated upload request (the body of `POST /blobs/uploads`).
struct upload_request {
  std::uint64_t size = 0;
  std::string content_type;
  std::optional<std::string> blob_id;  ///< a new version of this blob
};

/// Validates `{"size", "content_type", "blob_id"?}`: unknown members, a size of at least 1 byte,
/// a `type/subtype` content type, a `blb_` id.
std::variant<upload_request, api_error> parse_upload_request(const boost::json::object& body);

/// LIMIT_EXCEEDED when `r` is larger than `limits.max_blob_bytes` (the broker's configuration).
std::optional<api_error> over_limits(const upload_request& r, const upload_limits& limits);

/// One part of a multipart upload: its number (from 1) and its size.
struct part_plan {
  int number = 0;
  std::uint64_t size = 0;
};

/// How an upload of `size` bytes goes: SINGLE (one PUT) or MULTIPART (parts of `part_size`, the
/// last one shorter), with the part size raised when `size` would need more than `max_parts`.
struct upload_layout {
  bool multipart = false;
  std::uint64_t part_size = 0;
  int part_count = 0;
  /// Parts `from` .. `from + parts_per_answer - 1` (those that exist).
  std::vector<part_plan> parts(int from, std::size_t at_most) const;
  std::uint64_t size = 0;
};
upload_layout layout_upload(std::uint64_t size, const upload_limits& limits);

}  // namespace cl::domain
