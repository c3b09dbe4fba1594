#include "domain/blob_upload.hpp"
#include "http/s3_client.hpp"
#include "http/client_step.hpp"

#include "domain/base64url.hpp"
#include "domain/clock.hpp"
#include "domain/sigv4.hpp"
#include "http/s3_protocol.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <stdexcept>
#include <sys/socket.h>

namespace cl::http {

namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
namespace sigv4 = domain::sigv4;

using query_t = std::vector<std::pair<std::string, std::string>>;
using headers_t = std::vector<std::pair<std::string, std::string>>;

/// Receives a response body in pieces (a read-back hashed on the way).
using body_sink = std::function<void(std::string_view)>;

struct response {
  int status = 0;
  std::string body;  ///< unless a sink took it (a 200 with a sink)
  std::optional<std::uint64_t> content_length;  ///< as the header says (a HEAD's is the object's size)
};

/// Streaming SHA-256.
class sha256_stream {
public:
  sha256_stream() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~sha256_stream() { EVP_MD_CTX_free(ctx_); }
  sha256_stream(const sha256_stream&) = delete;
  sha256_stream& operator=(const sha256_stream&) = delete;
  void update(std::string_view b) { EVP_DigestUpdate(ctx_, b.data(), b.size()); }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx_, md, &len);
    return domain::hex_encode(std::string_view{reinterpret_cast<const char*>(md), len});
  }

private:
  EVP_MD_CTX* ctx_;
};

/// The `Code` of an S3 error body, for messages (never the body itself: it may echo a signature).
std::string error_code(const std::string& xml) {
  auto code = s3::element(xml, "Code");
  return code ? std::string{code->first.substr(0, 64)} : std::string{"no S3 error code"};
}

class s3_backend final : public storage::blob_backend {
public:
  explicit s3_backend(s3_backend_config cfg) : cfg_(std::move(cfg)), tls_(ssl::context::tls_client) {
    auto scheme_end = cfg_.endpoint.find("://");
    if (scheme_end == std::string::npos) throw std::invalid_argument("blobs.s3.endpoint must be http(s)://host[:port]");
    scheme_ = cfg_.endpoint.substr(0, scheme_end);
    if (scheme_ != "http" && scheme_ != "https") throw std::invalid_argument("blobs.s3.endpoint must be http or https");
    authority_ = cfg_.endpoint.substr(scheme_end + 3);
    while (!authority_.empty() && authority_.back() == '/') authority_.pop_back();
    if (authority_.empty() || authority_.find('/') != std::string::npos)
      throw std::invalid_argument("blobs.s3.endpoint must be http(s)://host[:port], without a path");
    host_ = authority_;
    port_ = scheme_ == "https" ? "443" : "80";
    if (auto colon = authority_.rfind(':'); colon != std::string::npos && authority_.find(']') == std::string::npos) {
      host_ = authority_.substr(0, colon);
      port_ = authority_.substr(colon + 1);
    }
    if (scheme_ == "https") {
      tls_.set_default_verify_paths();
      if (!cfg_.ca_file.empty()) tls_.load_verify_file(cfg_.ca_file);
      tls_.set_verify_mode(ssl::verify_peer);
    }
  }

  // An S3 service enforces a size only through a signed Content-Length header, which would take
  // away "any client, no extra header": sizes are checked at completion instead.
  std::string presign_put(const std::string& key, std::uint64_t, std::int64_t now, std::int64_t seconds) const override {
    return presigned("PUT", key, {}, now, seconds);
  }
  std::string presign_part(const std::string& key, const std::string& upload_id, int number, std::uint64_t,
                           std::int64_t now, std::int64_t seconds) const override {
    return presigned("PUT", key, {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}}, now, seconds);
  }
  std::string presign_get(const std::string& key, const std::string& content_type, std::int64_t now,
                          std::int64_t seconds) const override {
    // An active type downloads as an attachment (S3's response override); S3 sends no nosniff.
    query_t query{{"response-content-type", content_type}};
    if (domain::active_content_type(content_type)) query.emplace_back("response-content-disposition", "attachment");
    return presigned("GET", key, std::move(query), now, seconds);
  }

  std::string create_multipart(const std::string& key, const std::string& content_type) override {
    auto r = call("POST", key, {{"uploads", ""}}, {}, {{"content-type", content_type}});
    expect_ok(r, "CreateMultipartUpload");
    auto id = s3::element(r.body, "UploadId");
    if (!id || id->first.empty()) throw std::runtime_error("S3 CreateMultipartUpload: no UploadId in the answer");
    return std::string{id->first};
  }

  std::optional<std::vector<std::pair<int, storage::object_info>>> list_parts(
    const std::string& key, const std::string& upload_id) const override {
    std::vector<std::pair<int, storage::object_info>> out;
    std::string marker;
    for (int page = 0; page < 20; ++page) {  // 1,000 parts a page, 10,000 at most
      query_t q{{"uploadId", upload_id}};
      if (!marker.empty()) q.emplace_back("part-number-marker", marker);
      auto r = call("GET", key, q, {}, {});
      if (r.status == 404) throw no_such_upload{};
      if (r.status == 405 || r.status == 501) return std::nullopt;  // a service without ListParts
      expect_ok(r, "ListParts");
      std::size_t at = 0;
      while (auto part = s3::element(r.body, "Part", at)) {
        at = part->second;
        auto number = s3::element(part->first, "PartNumber");
        auto size = s3::element(part->first, "Size");
        auto etag = s3::element(part->first, "ETag");
        if (!number || !size) continue;
        storage::object_info info;
        info.key = key;
        info.size = std::stoull(std::string{size->first});
        if (etag) {
          info.etag = s3::unescape(etag->first);
          info.etag.erase(std::remove(info.etag.begin(), info.etag.end(), '"'), info.etag.end());
        }
        out.emplace_back(std::stoi(std::string{number->first}), std::move(info));
      }
      auto truncated = s3::element(r.body, "IsTruncated");
      auto next = s3::element(r.body, "NextPartNumberMarker");
      if (!truncated || truncated->first != "true" || !next) break;
      marker = std::string{next->first};
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }

  storage::finish_result complete_multipart(const std::string& key, const std::string& upload_id,
                                            const storage::expected_object& expect) override {
    std::optional<std::vector<std::pair<int, storage::object_info>>> listed;
    try {
      listed = list_parts(key, upload_id);
    } catch (const no_such_upload&) {
      return check_single(key, expect);  // completed before, its answer lost
    }
    // Without ListParts, parts 1..part_count with their sizes by the layout and no ETags (a service
    // that lacks ListParts, like s3rver, does not check them); the read-back below checks the result.
    auto stored = listed ? *listed : expected_parts(expect);
    if (listed)
      if (auto refused = storage::check_parts(stored, expect)) return *refused;
    std::string xml = "<CompleteMultipartUpload>";
    for (const auto& [n, info] : stored)
      xml += "<Part><PartNumber>" + std::to_string(n) + "</PartNumber><ETag>\"" + s3::escape(info.etag)
             + "\"</ETag></Part>";
    xml += "</CompleteMultipartUpload>";
    auto r = call("POST", key, {{"uploadId", upload_id}}, xml, {{"content-type", "application/xml"}});
    if (r.status == 404) return check_single(key, expect);  // completed before, its answer lost
    // S3 may answer 200 with an <Error> body when assembly fails late.
    if (r.status != 200 || s3::element(r.body, "Code")) {
      if (!listed) {  // most likely a part is missing: the service cannot say which
        storage::finish_result missing;
        missing.kind = storage::finish_result::missing_parts;
        return missing;
      }
      throw std::runtime_error("S3 CompleteMultipartUpload: HTTP " + std::to_string(r.status) + " " + error_code(r.body));
    }
    auto result = check_single(key, expect);
    if (result.kind == storage::finish_result::done) return result;
    // The service assembled before anyone could hash: restore the parts under a new upload
    // (server-side copies of the object's ranges), so the client re-sends only what was wrong.
    result.store_upload_id = restore_parts(key, stored);
    return result;
  }

  /// The parts an upload of `expect` has by its layout (sizes; no ETags).
  static std::vector<std::pair<int, storage::object_info>> expected_parts(const storage::expected_object& expect) {
    std::vector<std::pair<int, storage::object_info>> parts;
    for (int n = 1; n <= expect.part_count; ++n) {
      storage::object_info info;
      auto start = static_cast<std::uint64_t>(n - 1) * expect.part_size;
      info.size = std::min(expect.part_size, expect.size - start);
      parts.emplace_back(n, std::move(info));
    }
    return parts;
  }

  storage::finish_result check_single(const std::string& key, const storage::expected_object& expect) const override {
    storage::finish_result r;
    auto head = call("HEAD", key, {}, {}, {});
    if (head.status == 404) {
      r.kind = storage::finish_result::nothing_uploaded;
      return r;
    }
    expect_ok(head, "HeadObject");
    // Only the size asked for (GET .../parts of a SINGLE upload): the HEAD tells it; no read-back.
    if (expect.sha256.empty() && head.content_length) {
      if (*head.content_length != expect.size) {
        r.kind = storage::finish_result::size_mismatch;
        r.size = *head.content_length;
      } else {
        r.object.key = key;
        r.object.size = *head.content_length;
      }
      return r;
    }
    sha256_stream sha;
    std::uint64_t size = 0;
    auto got = call("GET", key, {}, {}, {}, [&](std::string_view bytes) {
      sha.update(bytes);
      size += bytes.size();
    });
    if (got.status == 404) {
      r.kind = storage::finish_result::nothing_uploaded;
      return r;
    }
    expect_ok(got, "GetObject");
    if (size != expect.size) {
      r.kind = storage::finish_result::size_mismatch;
      r.size = size;
      return r;
    }
    auto hex = sha.hex();
    if (!expect.sha256.empty() && hex != expect.sha256) {
      r.kind = storage::finish_result::checksum_mismatch;
      return r;
    }
    r.object.key = key;
    r.object.size = size;
    r.object.sha256 = hex;
    return r;
  }

  // An S3 service cannot be told to refuse a presigned PUT that is still valid: the committed
  // version is a server-side copy under its own key, read back there; what the upload's URL stores
  // later lands at the upload key, which no version names.
  storage::finish_result commit_single(const std::string& upload_key, const std::string& version_key,
                                       const storage::expected_object& expect, std::int64_t) override {
    if (upload_key == version_key) return check_single(upload_key, expect);
    auto earlier = check_single(version_key, expect);  // a completion cut off before it was recorded
    if (earlier.kind == storage::finish_result::done) return earlier;
    if (earlier.kind != storage::finish_result::nothing_uploaded) abort(version_key, "", 0);
    auto copied = call("PUT", version_key, {}, {},
                       {{"x-amz-copy-source", "/" + cfg_.bucket + "/" + sigv4::uri_encode(upload_key, true)}});
    if (copied.status == 404) {
      storage::finish_result none;
      none.kind = storage::finish_result::nothing_uploaded;
      return none;
    }
    // S3 may answer 200 with an <Error> body when a copy fails late.
    if (copied.status != 200 || s3::element(copied.body, "Code"))
      throw std::runtime_error("S3 CopyObject: HTTP " + std::to_string(copied.status) + " " + error_code(copied.body));
    auto r = check_single(version_key, expect);
    if (r.kind != storage::finish_result::done) abort(version_key, "", 0);  // the upload stays in progress
    else abort(upload_key, "", 0);
    return r;
  }

  void abort(const std::string& key, const std::string& upload_id, std::int64_t) override {
    auto r = upload_id.empty() ? call("DELETE", key, {}, {}, {}) : call("DELETE", key, {{"uploadId", upload_id}}, {}, {});
    if (r.status / 100 != 2 && r.status != 404)
      spdlog::warn("blobs: the S3 service did not release an upload: HTTP {} {}", r.status, error_code(r.body));
  }

private:
  struct no_such_upload {};

  std::string request_host() const { return cfg_.path_style ? authority_ : cfg_.bucket + "." + authority_; }
  std::string object_path(const std::string& key) const {
    return cfg_.path_style ? "/" + cfg_.bucket + "/" + key : "/" + key;
  }

  std::string presigned(const std::string& method, const std::string& key, query_t query, std::int64_t now,
                        std::int64_t seconds) const {
    return scheme_ + "://" + request_host()
           + sigv4::presign({cfg_.access_key_id, cfg_.secret_access_key, cfg_.region}, method, request_host(),
                            object_path(key), std::move(query), now, seconds);
  }

  static void expect_ok(const response& r, const char* op) {
    if (r.status / 100 != 2)
      throw std::runtime_error(std::string{"S3 "} + op + ": HTTP " + std::to_string(r.status) + " " + error_code(r.body));
  }

  /// One signed request on a fresh connection.
  response call(const std::string& method, const std::string& key, const query_t& query, const std::string& body,
                headers_t extra, const body_sink& sink = nullptr) const {
    auto path = object_path(key);
    sigv4::header_sign_request s;
    s.method = method;
    s.host = request_host();
    s.path = path;
    s.query = query;
    s.headers = extra;
    s.payload_hash = sigv4::sha256_hex(body);
    s.access_key_id = cfg_.access_key_id;
    s.secret_access_key = cfg_.secret_access_key;
    s.region = cfg_.region;
    s.now = domain::now_seconds();
    std::string target = sigv4::uri_encode(path, true);
    if (!query.empty()) {
      target += "?";
      bool first = true;
      for (const auto& [k, v] : query) {
        target += (first ? "" : "&") + sigv4::uri_encode(k, false) + "=" + sigv4::uri_encode(v, false);
        first = false;
      }
    }
    bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
    req.set(bhttp::field::host, request_host());
    req.set(bhttp::field::user_agent, "contentlake-blobs");
    for (const auto& [k, v] : extra) req.set(k, v);
    for (const auto& [k, v] : sigv4::sign_headers(s)) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    net::io_context ioc;
    tcp::resolver resolver{ioc};
    note_resolving("s3", host_);
    auto endpoints = resolver.resolve(host_, port_);
    note_outbound("s3", endpoints);
    if (scheme_ == "https") {
      beast::ssl_stream<beast::tcp_stream> stream{ioc, tls_};
      if (!SSL_set_tlsext_host_name(stream.native_handle(), host_.c_str()))
        throw std::runtime_error("S3: cannot set the TLS server name");
      stream.set_verify_callback(ssl::host_name_verification(host_));
      beast::get_lowest_layer(stream).connect(endpoints);
      with_timeouts(beast::get_lowest_layer(stream).socket());
      stream.handshake(ssl::stream_base::client);
      return exchange(stream, req, method == "HEAD", sink);
    }
    beast::tcp_stream stream{ioc};
    stream.connect(endpoints);
    with_timeouts(stream.socket());
    return exchange(stream, req, method == "HEAD", sink);
  }

  void with_timeouts(tcp::socket& socket) const {
    timeval tv{static_cast<time_t>(cfg_.timeout.count() / 1000), static_cast<suseconds_t>((cfg_.timeout.count() % 1000) * 1000)};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }

  template <class Stream>
  static response exchange(Stream& stream, bhttp::request<bhttp::string_body>& req, bool head, const body_sink& sink) {
    bhttp::write(stream, req);
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::buffer_body> parser;
    parser.body_limit(boost::none);
    parser.skip(head);
    bhttp::read_header(stream, buffer, parser);
    response r;
    r.status = static_cast<int>(parser.get().result_int());
    if (auto length = parser.get()[bhttp::field::content_length]; !length.empty()) {
      std::uint64_t n = 0;
      auto [p, ec] = std::from_chars(length.data(), length.data() + length.size(), n);
      if (ec == std::errc{} && p == length.data() + length.size()) r.content_length = n;
    }
    bool streamed = sink && r.status == 200;
    std::string chunk(1 << 20, '\0');
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      beast::error_code ec;
      bhttp::read(stream, buffer, parser, ec);
      if (ec && ec != bhttp::error::need_buffer) throw beast::system_error{ec};
      auto got = chunk.size() - parser.get().body().size;
      if (streamed) sink(std::string_view{chunk.data(), got});
      else if (r.body.size() + got <= (16u << 20)) r.body.append(chunk.data(), got);
    }
    return r;
  }

  /// After a refused completion: a new multipart upload holding the same parts again (UploadPartCopy
  /// of the object's byte ranges), then the wrong object goes. Answers the new upload id. Where the
  /// service cannot copy parts, the new upload starts empty (the client uploads every part again;
  /// `GET .../parts` shows none stored).
  std::string restore_parts(const std::string& key, const std::vector<std::pair<int, storage::object_info>>& parts) {
    auto fresh = create_multipart(key, "application/octet-stream");
    std::uint64_t offset = 0;
    for (const auto& [n, info] : parts) {
      auto range = "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + info.size - 1);
      offset += info.size;
      auto r = call("PUT", key, {{"partNumber", std::to_string(n)}, {"uploadId", fresh}}, {},
                    {{"x-amz-copy-source", "/" + cfg_.bucket + "/" + sigv4::uri_encode(key, true)},
                     {"x-amz-copy-source-range", range}});
      // A real UploadPartCopy answers <CopyPartResult>; a service that does not know it may store an
      // empty part and answer 200 (s3rver does): that is no copy.
      if (r.status != 200 || s3::element(r.body, "Code") || r.body.find("CopyPartResult") == std::string::npos) {
        spdlog::warn("blobs: the S3 service cannot copy parts (HTTP {} {}); the upload restarts empty", r.status,
                     error_code(r.body));
        abort(key, fresh, 0);
        fresh = create_multipart(key, "application/octet-stream");
        break;
      }
    }
    abort(key, "", 0);
    return fresh;
  }

  s3_backend_config cfg_;
  mutable ssl::context tls_;  // streams take it by reference; it is not changed after construction
  std::string scheme_, authority_, host_, port_;
};

}  // namespace

std::unique_ptr<storage::blob_backend> make_s3_backend(s3_backend_config cfg) {
  return std::make_unique<s3_backend>(std::move(cfg));
}

}  // namespace cl::http
