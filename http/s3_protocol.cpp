#include "http/s3_protocol.hpp"

#include "domain/base64url.hpp"
#include "domain/contract.hpp"
#include "domain/ids.hpp"
#include "domain/sigv4.hpp"
#include "storage/objects/object_files.hpp"

#include <cctype>
#include <charconv>
#include <ctime>

namespace cl::http::s3 {

namespace {

std::optional<std::string> param(const std::vector<std::pair<std::string, std::string>>& query, std::string_view name) {
  for (const auto& [k, v] : query)
    if (k == name) return v;
  return std::nullopt;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out.push_back(text[i]);
      continue;
    }
    static const std::pair<std::string_view, char> entities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}, {"&#34;", '"'}};
    bool matched = false;
    for (const auto& [entity, c] : entities)
      if (text.substr(i, entity.size()) == entity) {
        out.push_back(c);
        i += entity.size() - 1;
        matched = true;
        break;
      }
    if (!matched) out.push_back('&');
  }
  return out;
}

/// The text of the first `<tag>...</tag>` in `xml` from `from`, and where it ends.
std::optional<std::pair<std::string_view, std::size_t>> element(std::string_view xml, std::string_view tag,
                                                                std::size_t from) {
  auto open = "<" + std::string{tag} + ">";
  auto close = "</" + std::string{tag} + ">";
  auto start = xml.find(open, from);
  if (start == std::string_view::npos) return std::nullopt;
  start += open.size();
  auto end = xml.find(close, start);
  if (end == std::string_view::npos) return std::nullopt;
  return std::pair{xml.substr(start, end - start), end + close.size()};
}

namespace {

constexpr std::string_view xml_head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
constexpr std::string_view s3_ns = " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";

}  // namespace

std::variant<request_target, error> classify(std::string_view method, std::string_view path,
                                             const std::vector<std::pair<std::string, std::string>>& query) {
  request_target t;
  if (path.empty() || path.front() != '/') return error{400, "InvalidURI", "Couldn't parse the specified URI."};
  auto rest = path.substr(1);
  auto slash = rest.find('/');
  t.bucket = std::string{rest.substr(0, slash)};
  if (t.bucket.empty()) return error{400, "InvalidBucketName", "The specified bucket is not valid."};
  if (slash == std::string_view::npos || slash + 1 == rest.size())
    return error{501, "NotImplemented", "Bucket operations are not implemented by this store."};
  t.key = std::string{rest.substr(slash + 1)};
  if (!storage::object_files::valid_key(t.key))
    return error{400, "InvalidArgument", "The object key is not acceptable (empty, '.' or '..' segments, control characters)."};
  auto upload = param(query, "uploadId");
  auto part = param(query, "partNumber");
  bool uploads = param(query, "uploads").has_value();
  if (upload) t.upload_id = *upload;
  if (auto type = param(query, "response-content-type")) t.response_content_type = *type;
  if (auto disposition = param(query, "response-content-disposition")) t.response_content_disposition = *disposition;
  if (auto length = param(query, "X-Cl-Length")) {
    std::uint64_t n = 0;
    auto [p, ec] = std::from_chars(length->data(), length->data() + length->size(), n);
    if (ec != std::errc{} || p != length->data() + length->size())
      return error{400, "InvalidArgument", "X-Cl-Length must be a whole number of bytes."};
    t.required_length = n;
  }
  if (part) {
    int n = 0;
    auto [p, ec] = std::from_chars(part->data(), part->data() + part->size(), n);
    if (ec != std::errc{} || p != part->data() + part->size() || n < 1 || n > 10000)
      return error{400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive."};
    t.part_number = n;
  }
  auto unsupported = error{501, "NotImplemented", "A header or query you provided implies functionality that is not implemented."};
  if (method == "PUT") {
    if (upload && part) return t.op = operation::upload_part, t;
    if (upload || part || uploads) return unsupported;
    return t.op = operation::put_object, t;
  }
  if (method == "POST") {
    if (uploads && !upload) return t.op = operation::create_multipart_upload, t;
    if (upload && !part) return t.op = operation::complete_multipart_upload, t;
    return unsupported;
  }
  if (method == "GET") {
    if (upload) return t.op = operation::list_parts, t;
    if (part) return unsupported;
    return t.op = operation::get_object, t;
  }
  if (method == "HEAD") return t.op = operation::head_object, t;
  if (method == "DELETE") {
    if (upload) return t.op = operation::abort_multipart_upload, t;
    return t.op = operation::delete_object, t;
  }
  return error{405, "MethodNotAllowed", "The specified method is not allowed against this resource."};
}

std::string error_xml(const error& e, std::string_view resource, std::string_view request_id) {
  return std::string{xml_head} + "<Error><Code>" + escape(e.code) + "</Code><Message>" + escape(e.message)
         + "</Message><Resource>" + escape(resource) + "</Resource><RequestId>" + escape(request_id)
         + "</RequestId></Error>";
}

std::string initiate_multipart_xml(std::string_view bucket, std::string_view key, std::string_view upload_id) {
  return std::string{xml_head} + "<InitiateMultipartUploadResult" + std::string{s3_ns} + "><Bucket>" + escape(bucket)
         + "</Bucket><Key>" + escape(key) + "</Key><UploadId>" + escape(upload_id)
         + "</UploadId></InitiateMultipartUploadResult>";
}

std::string complete_multipart_xml(std::string_view location, std::string_view bucket, std::string_view key,
                                   std::string_view etag) {
  return std::string{xml_head} + "<CompleteMultipartUploadResult" + std::string{s3_ns} + "><Location>"
         + escape(location) + "</Location><Bucket>" + escape(bucket) + "</Bucket><Key>" + escape(key)
         + "</Key><ETag>&quot;" + escape(etag) + "&quot;</ETag></CompleteMultipartUploadResult>";
}

std::string list_parts_xml(std::string_view bucket, std::string_view key, std::string_view upload_id,
                           const std::vector<listed_part>& parts) {
  std::string out = std::string{xml_head} + "<ListPartsResult" + std::string{s3_ns} + "><Bucket>" + escape(bucket)
                    + "</Bucket><Key>" + escape(key) + "</Key><UploadId>" + escape(upload_id)
                    + "</UploadId><PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>"
                    + std::to_string(parts.empty() ? 0 : parts.back().number)
                    + "</NextPartNumberMarker><MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>";
  for (const auto& p : parts)
    out += "<Part><PartNumber>" + std::to_string(p.number) + "</PartNumber><LastModified>" + iso_time(p.modified)
           + "</LastModified><ETag>&quot;" + escape(p.etag) + "&quot;</ETag><Size>" + std::to_string(p.size)
           + "</Size></Part>";
  return out + "</ListPartsResult>";
}

namespace {
std::string copy_result_xml(std::string_view element, std::string_view etag, std::int64_t modified) {
  return std::string{xml_head} + "<" + std::string{element} + std::string{s3_ns} + "><LastModified>"
         + iso_time(modified) + "</LastModified><ETag>&quot;" + escape(etag) + "&quot;</ETag></"
         + std::string{element} + ">";
}
}  // namespace

std::string copy_part_xml(std::string_view etag, std::int64_t modified) {
  return copy_result_xml("CopyPartResult", etag, modified);
}

std::string copy_object_xml(std::string_view etag, std::int64_t modified) {
  return copy_result_xml("CopyObjectResult", etag, modified);
}

std::optional<std::pair<std::string, std::string>> parse_copy_source(std::string_view value) {
  if (value.find('?') != std::string_view::npos) return std::nullopt;  // ?versionId=: no versions here
  auto decoded = domain::sigv4::uri_decode(value);
  if (!decoded) return std::nullopt;
  std::string_view v{*decoded};
  if (!v.empty() && v.front() == '/') v.remove_prefix(1);
  auto slash = v.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == v.size()) return std::nullopt;
  return std::pair{std::string{v.substr(0, slash)}, std::string{v.substr(slash + 1)}};
}

std::optional<std::vector<std::pair<int, std::string>>> parse_complete_body(std::string_view xml) {
  auto root = element(xml, "CompleteMultipartUpload");
  if (!root) {
    // With a namespace the opening tag carries attributes: find it by its prefix.
    auto at = xml.find("<CompleteMultipartUpload ");
    auto end = xml.find("</CompleteMultipartUpload>");
    if (at == std::string_view::npos || end == std::string_view::npos) return std::nullopt;
    auto body_start = xml.find('>', at);
    if (body_start == std::string_view::npos || body_start > end) return std::nullopt;
    root = std::pair{xml.substr(body_start + 1, end - body_start - 1), end};
  }
  std::vector<std::pair<int, std::string>> parts;
  std::size_t from = 0;
  while (auto part = element(root->first, "Part", from)) {
    from = part->second;
    auto number = element(part->first, "PartNumber");
    auto etag = element(part->first, "ETag");
    if (!number || !etag) return std::nullopt;
    int n = 0;
    auto text = number->first;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || p != text.data() + text.size()) return std::nullopt;
    auto tag = unescape(etag->first);
    if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') tag = tag.substr(1, tag.size() - 2);
    parts.emplace_back(n, tag);
  }
  if (parts.empty()) return std::nullopt;
  return parts;
}

std::string http_date(std::int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

std::string iso_time(std::int64_t t) {
  auto s = domain::format_utc(t);  // YYYY-MM-DDTHH:MM:SSZ
  return s.substr(0, s.size() - 1) + ".000Z";
}

std::optional<byte_range> parse_range(std::string_view header, std::uint64_t size) {
  constexpr std::string_view unit = "bytes=";
  if (header.substr(0, unit.size()) != unit) return std::nullopt;
  auto spec = header.substr(unit.size());
  if (spec.find(',') != std::string_view::npos) return std::nullopt;  // several ranges: the whole object
  auto dash = spec.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view s) -> std::optional<std::uint64_t> {
    std::uint64_t v = 0;
    if (s.empty()) return std::nullopt;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return v;
  };
  auto first = number(spec.substr(0, dash));
  auto last = number(spec.substr(dash + 1));
  if (!first && !last) return std::nullopt;
  if (!first) {  // suffix: the last N bytes
    if (*last == 0) return byte_range{0, 0, true};
    auto n = std::min(*last, size);
    if (size == 0) return byte_range{0, 0, true};
    return byte_range{size - n, size - 1, false};
  }
  if (*first >= size) return byte_range{0, 0, true};
  if (last && *last < *first) return std::nullopt;  // invalid: ignored, as RFC 9110 says
  return byte_range{*first, std::min(last.value_or(size - 1), size - 1), false};
}

std::optional<split_target_t> split_target(std::string_view target) {
  auto q = target.find('?');
  auto path = domain::sigv4::uri_decode(target.substr(0, q));
  if (!path) return std::nullopt;
  split_target_t out{std::move(*path), {}};
  if (q == std::string_view::npos) return out;
  auto rest = target.substr(q + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    auto item = rest.substr(0, amp);
    auto eq = item.find('=');
    auto name = domain::sigv4::uri_decode(item.substr(0, eq));
    auto value = domain::sigv4::uri_decode(eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1));
    if (!name || !value) return std::nullopt;
    if (!name->empty()) out.query.emplace_back(std::move(*name), std::move(*value));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return out;
}

error auth_error(domain::sigv4::failure why, std::string_view detail, bool in_query) {
  using domain::sigv4::failure;
  std::string said{detail};
  switch (why) {
    case failure::missing: return {403, "AccessDenied", "Access Denied"};
    case failure::malformed:
      return {400, in_query ? "AuthorizationQueryParametersError" : "AuthorizationHeaderMalformed", said};
    case failure::unknown_key:
      return {403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."};
    case failure::wrong_region: return {400, "AuthorizationHeaderMalformed", said};
    case failure::expired: return {403, "AccessDenied", "Request has expired"};
    case failure::not_yet_valid:
      return in_query ? error{403, "AccessDenied", "Request is not valid yet"}
                      : error{403, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large."};
    case failure::signature_mismatch: return {403, "SignatureDoesNotMatch", said};
    case failure::none: break;
  }
  return {500, "InternalError", "We encountered an internal error. Please try again."};
}

std::string hex_of_base64(std::string_view b64) {
  std::string url{b64};
  for (auto& c : url) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!url.empty() && url.back() == '=') url.pop_back();
  auto raw = domain::base64url_decode(url);
  return raw ? domain::hex_encode(*raw) : std::string{};
}

bool aws_chunked(std::string_view payload_hash, std::string_view content_encoding) {
  if (payload_hash.rfind("STREAMING-", 0) == 0) return true;
  constexpr std::string_view chunked = "aws-chunked";
  if (content_encoding.size() < chunked.size()) return false;
  for (std::size_t i = 0; i < chunked.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(content_encoding[i])) != chunked[i]) return false;
  return true;
}

}  // namespace cl::http::s3
