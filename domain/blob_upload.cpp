#include "domain/blob_upload.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

namespace cl::domain {

namespace json = boost::json;

namespace {

api_error invalid(const std::string& field, const std::string& why) {
  return api_error{error_id::invalid_argument, "The upload request is not valid: " + why + ".", {{field, why}}};
}

/// RFC 9110 token characters.
bool token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view{"!#$%&'*+-.^_`|~"}.find(c) != std::string_view::npos;
}

/// `type/subtype` with optional `; param=value` parts, printable ASCII, at most 255 characters.
bool valid_content_type(std::string_view v) {
  if (v.empty() || v.size() > 255) return false;
  for (char c : v)
    if (c < 0x20 || c > 0x7e) return false;
  auto end = v.find(';');
  auto essence = v.substr(0, end);
  while (!essence.empty() && essence.back() == ' ') essence.remove_suffix(1);
  auto slash = essence.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == essence.size()) return false;
  for (std::size_t i = 0; i < essence.size(); ++i)
    if (i != slash && !token_char(essence[i])) return false;
  return true;
}

}  // namespace

bool active_content_type(std::string_view content_type) {
  std::string type;
  for (char c : content_type.substr(0, content_type.find(';'))) {
    if (c == ' ' || c == '\t') continue;
    type.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  static const std::string_view active[] = {
    "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/xsl",
    "application/xslt+xml", "text/javascript", "application/javascript", "application/x-javascript",
    "text/ecmascript", "application/ecmascript", "application/pdf", "application/x-shockwave-flash",
    "multipart/x-mixed-replace", "text/cache-manifest"};
  for (auto a : active)
    if (type == a) return true;
  return type.size() > 4 && type.compare(type.size() - 4, 4, "+xml") == 0;
}

std::variant<upload_request, api_error> parse_upload_request(const json::object& body) {
  for (const auto& m : body)
    if (m.key() != "size" && m.key() != "content_type" && m.key() != "blob_id")
      return invalid("/" + std::string{m.key()}.substr(0, 64), "is not a member of an upload request");
  upload_request r;
  auto* size = body.if_contains("size");
  if (!size || !(size->is_int64() || size->is_uint64()) || (size->is_int64() && size->as_int64() < 1))
    return invalid("/size", "must be a whole number of bytes, at least 1");
  r.size = size->is_uint64() ? size->as_uint64() : static_cast<std::uint64_t>(size->as_int64());
  auto* type = body.if_contains("content_type");
  if (!type || !type->is_string() || !valid_content_type(std::string_view{type->as_string().data(), type->as_string().size()}))
    return invalid("/content_type", "must be a media type such as image/png");
  r.content_type = std::string{type->as_string()};
  if (auto* blob = body.if_contains("blob_id")) {
    if (!blob->is_string() || blob->as_string().size() < 5 || blob->as_string().size() > 64
        || std::string_view{blob->as_string().data(), 4} != "blb_")
      return invalid("/blob_id", "must be a blb_ id");
    r.blob_id = std::string{blob->as_string()};
  }
  return r;
}

std::optional<api_error> over_limits(const upload_request& r, const upload_limits& limits) {
  if (r.size <= limits.max_blob_bytes) return std::nullopt;
  return api_error{error_id::limit_exceeded, "The blob is larger than " + std::to_string(limits.max_blob_bytes) + " bytes.",
                   {{"/size", "at most " + std::to_string(limits.max_blob_bytes) + " bytes (blobs.max_blob_bytes)"}}};
}

upload_layout layout_upload(std::uint64_t size, const upload_limits& limits) {
  upload_layout l;
  l.size = size;
  if (size < limits.multipart_threshold) {
    l.part_size = size;
    l.part_count = 1;
    return l;
  }
  l.multipart = true;
  l.part_size = limits.part_size;
  // Too many parts at this size: the smallest part size (whole MiB) that fits in max_parts.
  if ((size + l.part_size - 1) / l.part_size > limits.max_parts) {
    constexpr std::uint64_t mib = 1 << 20;
    auto needed = (size + limits.max_parts - 1) / limits.max_parts;
    l.part_size = (needed + mib - 1) / mib * mib;
  }
  l.part_count = static_cast<int>((size + l.part_size - 1) / l.part_size);
  return l;
}

std::vector<part_plan> upload_layout::parts(int from, std::size_t at_most) const {
  std::vector<part_plan> out;
  if (!multipart) return out;
  for (int n = std::max(from, 1); n <= part_count && out.size() < at_most; ++n) {
    auto offset = static_cast<std::uint64_t>(n - 1) * part_size;
    out.push_back({n, std::min(part_size, size - offset)});
  }
  return out;
}

}  // namespace cl::domain
