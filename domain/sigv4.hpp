#pragma once
/// AWS Signature Version 4 for S3, both sides: signing (presigned URLs, requests to an S3 service)
/// and verifying (the embedded object store). Pure functions over strings: no I/O, no clock (the
/// caller passes `now`). Reference: AWS "Authenticating Requests (AWS Signature Version 4)" for
/// S3; unit tests use the documentation's published examples and URLs presigned by boto3.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::domain::sigv4 {

inline constexpr std::string_view algorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view unsigned_payload = "UNSIGNED-PAYLOAD";
/// The SHA-256 of nothing: the payload hash of a request without a body.
inline constexpr std::string_view empty_payload_sha256 =
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/// Longest lifetime SigV4 allows for a presigned URL (7 days).
inline constexpr std::int64_t max_expires_seconds = 7 * 24 * 3600;
/// How far a request's time may be ahead of ours (and header-signed requests behind it).
inline constexpr std::int64_t allowed_skew_seconds = 15 * 60;

/// Percent-encodes everything but the unreserved characters (A-Z a-z 0-9 - _ . ~), and '/' when
/// `keep_slash` (paths); upper-case hex, as SigV4 requires.
std::string uri_encode(std::string_view text, bool keep_slash);

/// Decodes %XX escapes ('+' stays '+'); nullopt on a malformed escape.
std::optional<std::string> uri_decode(std::string_view text);

/// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

/// `YYYYMMDDTHHMMSSZ` of a Unix time, and back (nullopt when malformed).
std::string amz_date(std::int64_t unix_seconds);
std::optional<std::int64_t> parse_amz_date(std::string_view text);

/// What a signature covers, as the signer or the verifier sees it.
struct request_parts {
  std::string method;                                        ///< GET, PUT, ...
  std::string path;                                          ///< decoded path, e.g. /bucket/a b.bin
  std::vector<std::pair<std::string, std::string>> query;    ///< decoded names and values, any order
  std::vector<std::pair<std::string, std::string>> headers;  ///< the signed ones (names any case)
  std::string payload_hash;                                  ///< hex SHA-256 or UNSIGNED-PAYLOAD
};

/// The credential scope: date (YYYYMMDD), region, service ("s3").
struct credential_scope {
  std::string date, region, service = "s3";
  std::string text() const { return date + "/" + region + "/" + service + "/aws4_request"; }
};

/// The canonical request of `parts` (the query without X-Amz-Signature).
std::string canonical_request(const request_parts& parts);
/// The string to sign for a canonical request at `when` (YYYYMMDDTHHMMSSZ) in `scope`.
std::string string_to_sign(std::string_view when, const credential_scope& scope, std::string_view canonical);
/// The lower-case hex signature of `parts` with `secret` at `when` in `scope`.
std::string sign(std::string_view secret, std::string_view when, const credential_scope& scope,
                 const request_parts& parts);

/// What a presigned URL is made from.
struct presign_request {
  std::string method;  ///< the only method the URL is good for
  std::string host;    ///< as the client will send it in `Host` (host or host:port)
  std::string path;    ///< decoded, path-style: /bucket/key
  std::vector<std::pair<std::string, std::string>> query;  ///< extra parameters (uploadId, partNumber)
  std::string access_key_id, secret_access_key, region;
  std::int64_t now = 0;          ///< Unix seconds the URL starts at
  std::int64_t expires = 900;    ///< seconds it stays valid (1 .. 7 days)
};

/// The path and query of a presigned URL (`/bucket/key?X-Amz-Algorithm=...&X-Amz-Signature=...`)
/// signing only `host`; prefix it with the scheme and host.
std::string presign(const presign_request& r);

/// Who signs, for what region: a store client's fixed part of every presigned URL.
struct credentials {
  std::string access_key_id, secret_access_key, region;
};

/// `presign` with `who`'s credentials: `method` on `path` (decoded) of `host`, valid `seconds` from `now`.
std::string presign(const credentials& who, std::string method, std::string host, std::string path,
                    std::vector<std::pair<std::string, std::string>> query, std::int64_t now, std::int64_t seconds);

/// What a request signed in its `Authorization` header is made from (server-side calls to an S3
/// service).
struct header_sign_request {
  std::string method;
  std::string host;  ///< as sent in `Host`
  std::string path;  ///< decoded: /bucket/key
  std::vector<std::pair<std::string, std::string>> query;    ///< decoded
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra headers to sign (e.g. x-amz-copy-source)
  std::string payload_hash;  ///< hex SHA-256 of the body
  std::string access_key_id, secret_access_key, region;
  std::int64_t now = 0;
};

/// The headers to add to the request: `x-amz-date`, `x-amz-content-sha256` and `Authorization`
/// (signing `host`, those two and the extra headers).
std::vector<std::pair<std::string, std::string>> sign_headers(const header_sign_request& r);

/// Why a request was refused; the embedded store maps these to S3's XML error codes.
enum class failure {
  none,
  missing,             ///< no signature at all (anonymous request)
  malformed,           ///< AuthorizationQueryParametersError / AuthorizationHeaderMalformed
  unknown_key,         ///< InvalidAccessKeyId
  wrong_region,        ///< AuthorizationHeaderMalformed (the region is not ours)
  expired,             ///< AccessDenied "Request has expired"
  not_yet_valid,       ///< AccessDenied "Request is not valid yet" / RequestTimeTooSkewed
  signature_mismatch,  ///< SignatureDoesNotMatch
};

struct verdict {
  failure why = failure::none;
  std::string access_key_id;  ///< who signed, when known
  std::string payload_hash;   ///< what the signature says about the body (hex or UNSIGNED-PAYLOAD)
  std::string detail;         ///< for the error body; never a signature or a secret
  explicit operator bool() const { return why == failure::none; }
};

/// A received request: the method, the decoded path, the decoded query, and header lookup.
struct received_request {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
  std::function<std::optional<std::string>(std::string_view lower_name)> header;
};

/// The secret of an access key id, if the key is known.
using secret_lookup = std::function<std::optional<std::string>(std::string_view access_key_id)>;

/// Verifies a request signed in its query string (presigned) or its `Authorization` header,
/// for `region` at Unix time `now`.
verdict verify(const received_request& r, const secret_lookup& secrets, std::string_view region, std::int64_t now);

}  // namespace cl::domain::sigv4
