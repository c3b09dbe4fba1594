#pragma once
/// The S3 protocol as the embedded object store speaks it (path-style): which operation a request
/// is, the XML bodies of answers and errors, and the CompleteMultipartUpload request body. Pure
/// string work, no sockets: the listener (issue 13) calls it, unit tests check it against what
/// boto3 and the AWS CLI send and expect.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <utility>
#include <vector>

namespace cl::domain::sigv4 {
enum class failure;
}

namespace cl::http::s3 {

enum class operation {
  put_object,
  get_object,
  head_object,
  delete_object,
  create_multipart_upload,  ///< POST /bucket/key?uploads
  upload_part,              ///< PUT /bucket/key?partNumber=N&uploadId=U
  list_parts,               ///< GET /bucket/key?uploadId=U
  complete_multipart_upload,  ///< POST /bucket/key?uploadId=U
  abort_multipart_upload,   ///< DELETE /bucket/key?uploadId=U
};

/// A request the store understood: the operation and its target.
struct request_target {
  operation op = operation::get_object;
  std::string bucket;
  std::string key;
  std::string upload_id;
  int part_number = 0;  ///< upload_part: 1..10000
  /// get/head_object: `response-content-type` (S3's override of the stored type; a presigned
  /// GET signs it, so the broker's URLs serve the blob's declared type).
  std::string response_content_type;
  std::string response_content_disposition;  ///< `response-content-disposition` of a GET
  /// put_object/upload_part: `X-Cl-Length`, the exact body length a URL the blob broker presigned
  /// for the embedded store allows (signed with the rest of the query, so the declared size of an
  /// upload is enforced when the bytes arrive).
  std::optional<std::uint64_t> required_length;
};

/// An S3 error: HTTP status, `Code` and `Message` of the XML body.
struct error {
  int status = 400;
  std::string code;
  std::string message;
};

/// The operation of `method` on the decoded `path` and `query` (X-Amz-* parameters ignored), or
/// the error to answer: an unsupported operation, a bad part number, a key the store refuses.
std::variant<request_target, error> classify(std::string_view method, std::string_view path,
                                             const std::vector<std::pair<std::string, std::string>>& query);

/// XML text escaping (`&`, `<`, `>`, `"`, `'`) and its reverse.
std::string escape(std::string_view text);
std::string unescape(std::string_view text);

/// The text of the first `<tag>...</tag>` in `xml` from `from`, and where it ends (no attributes,
/// no nesting of the same tag: S3's documents).
std::optional<std::pair<std::string_view, std::size_t>> element(std::string_view xml, std::string_view tag,
                                                                std::size_t from = 0);

/// `<Error><Code>..</Code><Message>..</Message><Resource>..</Resource><RequestId>..</RequestId></Error>`.
std::string error_xml(const error& e, std::string_view resource, std::string_view request_id);

std::string initiate_multipart_xml(std::string_view bucket, std::string_view key, std::string_view upload_id);
/// `<CopyPartResult><LastModified>..</LastModified><ETag>"..."</ETag></CopyPartResult>`.
std::string copy_part_xml(std::string_view etag, std::int64_t modified);
/// CopyObject's answer.
std::string copy_object_xml(std::string_view etag, std::int64_t modified);

/// The bucket and key of an `x-amz-copy-source` value (`[/]bucket/key`, percent-encoded), or
/// nullopt when malformed or naming a version.
std::optional<std::pair<std::string, std::string>> parse_copy_source(std::string_view value);

std::string complete_multipart_xml(std::string_view location, std::string_view bucket, std::string_view key,
                                   std::string_view etag);

/// One part for ListPartsResult.
struct listed_part {
  int number = 0;
  std::string etag;  ///< without quotes
  std::uint64_t size = 0;
  std::int64_t modified = 0;  ///< Unix seconds
};
std::string list_parts_xml(std::string_view bucket, std::string_view key, std::string_view upload_id,
                           const std::vector<listed_part>& parts);

/// The (part number, ETag) list of a CompleteMultipartUpload body, in document order; nullopt when
/// the body is not such a document (MalformedXML).
std::optional<std::vector<std::pair<int, std::string>>> parse_complete_body(std::string_view xml);

/// `Wed, 21 Oct 2015 07:28:00 GMT` and ISO 8601 with milliseconds, as S3 writes times.
std::string http_date(std::int64_t unix_seconds);
std::string iso_time(std::int64_t unix_seconds);

/// A parsed `Range: bytes=...` header against an object of `size` bytes: the first and last byte
/// (inclusive). nullopt: no usable range (answer the whole object); `unsatisfiable`: 416.
struct byte_range {
  std::uint64_t first = 0, last = 0;
  bool unsatisfiable = false;
};
std::optional<byte_range> parse_range(std::string_view header, std::uint64_t size);

/// A request target (`/path?query`) split and percent-decoded: the path and the query's
/// (name, value) pairs in order, empty names dropped; nullopt when an escape is malformed.
struct split_target_t {
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
};
std::optional<split_target_t> split_target(std::string_view target);

/// The S3 error answering a signature check that failed with `why` and `detail`; `in_query`: a
/// presigned URL's.
error auth_error(domain::sigv4::failure why, std::string_view detail, bool in_query);

/// The hex of a base64 (standard alphabet) digest a client declared (`Content-MD5`,
/// `x-amz-checksum-sha256`); empty when malformed.
std::string hex_of_base64(std::string_view b64);

/// Whether `payload_hash` (the signed `x-amz-content-sha256`) or `content_encoding` announce an
/// aws-chunked body (chunk signatures, trailing checksums), which this store refuses (501) rather
/// than store with its framing.
bool aws_chunked(std::string_view payload_hash, std::string_view content_encoding);

}  // namespace cl::http::s3
