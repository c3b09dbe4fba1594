// Sizes and framing on the embedded S3 listener (docs/architecture.md, "Blobs"):
//
// - **Declared sizes** are enforced by the embedded store as bodies arrive (`X-Cl-Length`, signed);
//   with `blobs.backend = s3` at completion (400 `SIZE_MISMATCH`). `aws-chunked` bodies are refused
//   with 501 rather than stored with their framing.
//
// The embedded S3 listener's path (docs/architecture.md, "Blobs"):
//
//    header -> s3::classify -> sigv4::verify -> bucket check; bodies in 1 MiB chunks (one buffer a
//    connection, held while its body is read: an idle connection holds none), each written
//    (and MD5'd) on one disk thread while one hashing thread adds it to the SHA-256 (an I/O thread
//    never waits on a disk write or a digest), reads on two threads of their own; a download's body
//    goes out of two 1 MiB buffers per connection, the next `pread` under way while the last is
//    written

#include "http/s3_server.hpp"

#include "domain/base64url.hpp"
#include "domain/clock.hpp"
#include "domain/ids.hpp"
#include "domain/sigv4.hpp"
#include "http/s3_protocol.hpp"
#include "storage/objects/object_files.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <optional>

namespace cl::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t chunk_size = 1 << 20;  ///< bytes per read from the socket or the disk

const s3::error no_such_upload{404, "NoSuchUpload", "The specified upload does not exist."};
/// A PUT to a key closed to new bodies: an upload's URL after the upload was completed or aborted.
const s3::error closed_key{403, "AccessDenied", "This key takes no new bytes: its upload was completed or aborted."};

/// `/path?query` split and decoded; nullopt when an escape is malformed.
std::optional<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> split_target(std::string_view target) {
  auto q = target.find('?');
  auto path = domain::sigv4::uri_decode(target.substr(0, q));
  if (!path) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> query;
  if (q != std::string_view::npos) {
    auto rest = target.substr(q + 1);
    while (!rest.empty()) {
      auto amp = rest.find('&');
      auto item = rest.substr(0, amp);
      auto eq = item.find('=');
      auto name = domain::sigv4::uri_decode(item.substr(0, eq));
      auto value = domain::sigv4::uri_decode(eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1));
      if (!name || !value) return std::nullopt;
      if (!name->empty()) query.emplace_back(std::move(*name), std::move(*value));
      if (amp == std::string_view::npos) break;
      rest = rest.substr(amp + 1);
    }
  }
  return std::pair{std::move(*path), std::move(query)};
}

/// The S3 error for a refused signature.
s3::error auth_error(const domain::sigv4::verdict& v, bool in_query) {
  using domain::sigv4::failure;
  switch (v.why) {
    case failure::missing: return {403, "AccessDenied", "Access Denied"};
    case failure::malformed:
      return {400, in_query ? "AuthorizationQueryParametersError" : "AuthorizationHeaderMalformed", v.detail};
    case failure::unknown_key:
      return {403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."};
    case failure::wrong_region: return {400, "AuthorizationHeaderMalformed", v.detail};
    case failure::expired: return {403, "AccessDenied", "Request has expired"};
    case failure::not_yet_valid:
      return in_query ? s3::error{403, "AccessDenied", "Request is not valid yet"}
                      : s3::error{403, "RequestTimeTooSkewed", "The difference between the request time and the current time is too large."};
    case failure::signature_mismatch: return {403, "SignatureDoesNotMatch", v.detail};
    case failure::none: break;
  }
  return {500, "InternalError", "We encountered an internal error. Please try again."};
}

/// Hex of the base64 (standard alphabet) digest a client declared; empty when malformed.
std::string hex_of_base64(std::string_view b64) {
  std::string url{b64};
  for (auto& c : url) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!url.empty() && url.back() == '=') url.pop_back();
  auto raw = domain::base64url_decode(url);
  return raw ? domain::hex_encode(*raw) : std::string{};
}

}  // namespace

/// What stop() needs of a session: closing it on its own strand.
struct closable {
  virtual ~closable() = default;
  virtual void close_soon() = 0;
};

struct s3_server::impl : std::enable_shared_from_this<s3_server::impl> {
  impl(net::io_context& ioc, s3_server_config c) : ioc(ioc), acceptor(ioc), cfg(std::move(c)), disk(1), hashing(1) {
    beast::error_code ec;
    tcp::endpoint ep{net::ip::make_address(cfg.host, ec), cfg.port};
    if (ec) throw std::runtime_error("blobs.embedded.listen: " + cfg.host + " is not an IP address");
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec) throw std::runtime_error("blobs.embedded.listen: cannot listen on " + cfg.host + ":" + std::to_string(cfg.port) + ": " + ec.message());
  }
  void accept();

  net::io_context& ioc;
  tcp::acceptor acceptor;
  s3_server_config cfg;
  net::thread_pool disk;      ///< (one thread) writes (bodies, commits, multipart): never on an I/O thread
  net::thread_pool reads{2};  ///< reads (stat, open, pread): never queued behind a large upload's writes
  /// (one thread) the SHA-256 of bodies, beside the disk thread's writes and MD5: SHA-256 is the
  /// slowest step of an upload (about 390 MB/s on a core without SHA extensions)
  net::thread_pool hashing;
  std::mutex sessions_mutex;
  std::vector<std::weak_ptr<closable>> sessions;  ///< closed by stop()
};

namespace {

class s3_session : public closable, public std::enable_shared_from_this<s3_session> {
public:
  s3_session(tcp::socket socket, std::shared_ptr<s3_server::impl> server)
    : stream_(std::move(socket)), server_(std::move(server)) {}

  void start() { read_header(); }

  void close_soon() override {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
  }

private:
  const s3_server_config& cfg() const { return server_->cfg; }

  /// Runs `work` on the disk thread, then `then(result)` back on this session's strand.
  template <class Work, class Then>
  void on_disk(Work work, Then then) {
    run_on(server_->disk, std::move(work), std::move(then));
  }

  /// The same for reads, on their own threads.
  template <class Work, class Then>
  void on_read(Work work, Then then) {
    run_on(server_->reads, std::move(work), std::move(then));
  }

  /// A store call that throws (a full disk, an I/O error) answers the request with an S3 error
  /// instead of `then`, and never escapes into the pool's thread.
  template <class Work, class Then>
  void run_on(net::thread_pool& pool, Work work, Then then) {
    net::post(pool, [self = shared_from_this(), work = std::move(work), then = std::move(then)]() mutable {
      try {
        auto result = std::make_shared<decltype(work())>(work());
        net::post(self->stream_.get_executor(), [self, result, then = std::move(then)]() mutable { then(std::move(*result)); });
      } catch (const std::exception& e) {
        bool full = storage::disk_full(e);
        std::string what = e.what();
        net::post(self->stream_.get_executor(), [self, full, what] { self->store_failed(full, what); });
      }
    });
  }

  /// The store could not do what the request asked: nothing of it is stored (a body being received
  /// goes with its temporary files), the answer says why, and the connection closes (the rest of a
  /// body is not read).
  void store_failed(bool full, const std::string& what) {
    if (failed_) return;
    failed_ = true;
    spdlog::error("s3: {} {}: {}", method_, path_, what);
    auto answer = [self = shared_from_this(), full](bool = true) {
      if (full)
        return self->fail(
          {507, "InsufficientStorage", "The object store has no room for this request; nothing was stored."}, true);
      self->fail({500, "InternalError", "The object store failed; nothing was stored. Retry."}, true);
    };
    if (!incoming_) return answer();
    // The chunks still queued for the disk and hashing threads hold the body's temporary files,
    // which go with the last of them: answer after them (one thread each, in order), so that when
    // the client reads the answer nothing of the body is left on disk.
    incoming_.reset();
    on_disk([] { return true; }, [self = shared_from_this(), answer = std::move(answer)](bool) mutable {
      self->run_on(self->server_->hashing, [] { return true; }, std::move(answer));
    });
  }

  void read_header() {
    header_.emplace();
    header_->header_limit(16 * 1024);
    header_->body_limit(cfg().max_object_bytes);
    stream_.expires_after(std::chrono::seconds{60});
    bhttp::async_read_header(stream_, buffer_, *header_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->dispatch();
    });
  }

  void dispatch() {
    const auto& req = header_->get();
    method_ = std::string{req.method_string()};
    keep_alive_ = req.keep_alive();
    request_id_ = domain::random_id("req");
    if (req.count(bhttp::field::host) != 1) return fail({400, "InvalidArgument", "A request has exactly one Host header."}, true);
    auto split = split_target(std::string_view{req.target().data(), req.target().size()});
    if (!split) return fail({400, "InvalidURI", "Couldn't parse the specified URI."}, true);
    path_ = split->first;
    auto classified = s3::classify(method_, path_, split->second);
    if (auto* e = std::get_if<s3::error>(&classified)) return fail(*e, true);
    target_ = std::get<s3::request_target>(classified);
    // CopyObject and UploadPartCopy are served; on any other operation a copy source is refused
    // rather than ignored.
    copy_source_ = req.find("x-amz-copy-source") != req.end();
    if (copy_source_ && target_.op != s3::operation::upload_part && target_.op != s3::operation::put_object)
      return fail({501, "NotImplemented", "A header you provided implies functionality that is not implemented (x-amz-copy-source)."}, true);
    domain::sigv4::received_request r;
    r.method = method_;
    r.path = path_;
    r.query = split->second;
    r.header = [&req](std::string_view name) -> std::optional<std::string> {
      auto it = req.find(beast::string_view{name.data(), name.size()});
      if (it == req.end()) return std::nullopt;
      return std::string{it->value()};
    };
    bool in_query = false;
    for (const auto& [k, v] : r.query) in_query = in_query || k == "X-Amz-Signature";
    auto verdict = domain::sigv4::verify(
      r,
      [this](std::string_view id) -> std::optional<std::string> {
        if (id == cfg().access_key_id) return cfg().secret_access_key;
        return std::nullopt;
      },
      cfg().region, domain::now_seconds());
    if (!verdict) return fail(auth_error(verdict, in_query), true);
    payload_hash_ = verdict.payload_hash;
    // aws-chunked bodies (chunk signatures, trailing checksums) are not decoded yet: refused, so
    // their framing is never stored as an object's bytes.
    if (payload_hash_.rfind("STREAMING-", 0) == 0
        || beast::iequals(std::string{req[bhttp::field::content_encoding]}.substr(0, 11), "aws-chunked"))
      return fail({501, "NotImplemented", "aws-chunked request bodies are not supported by this store; send the body as is (UNSIGNED-PAYLOAD or its SHA-256)."}, true);
    if (target_.bucket != cfg().bucket) return fail({404, "NoSuchBucket", "The specified bucket does not exist"}, true);
    content_type_ = std::string{req[bhttp::field::content_type]};
    if (content_type_.empty()) content_type_ = "binary/octet-stream";
    switch (target_.op) {
      case s3::operation::put_object:
      case s3::operation::upload_part: return copy_source_ ? copy() : receive_body();
      case s3::operation::complete_multipart_upload: return read_small_body();
      case s3::operation::get_object:
      case s3::operation::head_object: return send_object();
      case s3::operation::delete_object: return delete_object();
      case s3::operation::create_multipart_upload: return create_upload();
      case s3::operation::list_parts: return list_parts();
      case s3::operation::abort_multipart_upload: return abort_upload();
    }
  }

  // --- bodies -------------------------------------------------------------------------------

  /// Answers `Expect: 100-continue` (S3 clients send it with bodies and wait for it) once the
  /// request is known to be accepted, then runs `next`.
  template <class Next>
  void continue_then(Next next) {
    auto expect = header_->get()[bhttp::field::expect];
    if (!beast::iequals(expect, "100-continue")) return next();
    auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, 11);
    bhttp::async_write(stream_, *cont, [self = shared_from_this(), cont, next](beast::error_code ec, std::size_t) mutable {
      if (ec) return self->close();
      next();
    });
  }

  /// CopyObject, or UploadPartCopy (a range of the source): an object of this bucket becomes the
  /// target object or part (on the write thread). A closed key takes no copy either.
  void copy() {
    const auto& req = header_->get();
    if (req.has_content_length() && req[bhttp::field::content_length] != "0")
      return fail({400, "InvalidRequest", "A copy request carries no body."}, true);
    auto source = s3::parse_copy_source(std::string{req["x-amz-copy-source"]});
    if (!source || !storage::object_files::valid_key(source->second))
      return fail({400, "InvalidArgument", "x-amz-copy-source must be bucket/key."}, false);
    if (source->first != cfg().bucket) return fail({403, "AccessDenied", "The copy source is not in this bucket."}, false);
    auto files = cfg().files;
    auto t = target_;
    auto range = std::string{req["x-amz-copy-source-range"]};
    if (t.op == s3::operation::put_object && !range.empty())
      return fail({400, "InvalidArgument", "CopyObject takes no x-amz-copy-source-range."}, false);
    struct copied {
      std::optional<storage::object_info> info;
      std::optional<s3::error> refusal;
    };
    on_disk(
      [files, t, source = *source, range]() -> copied {
        auto info = files->stat(source.first, source.second);
        auto path = files->data_path(source.first, source.second);
        if (!info || !path) return {std::nullopt, s3::error{404, "NoSuchKey", "The specified key does not exist."}};
        if (t.op == s3::operation::put_object && files->closed(t.bucket, t.key)) return {std::nullopt, closed_key};
        std::uint64_t first = 0, last = info->size == 0 ? 0 : info->size - 1;
        if (!range.empty()) {
          auto r = s3::parse_range(range, info->size);
          if (!r || r->unsatisfiable) return {std::nullopt, s3::error{400, "InvalidArgument", "The x-amz-copy-source-range is not valid for the source."}};
          first = r->first;
          last = r->last;
        }
        std::shared_ptr<storage::object_files::incoming> body{files->receive().release()};
        std::ifstream in{*path, std::ios::binary};
        in.seekg(static_cast<std::streamoff>(first));
        std::string buffer(chunk_size, '\0');
        auto left = info->size == 0 ? 0 : last - first + 1;
        while (left > 0 && in) {
          in.read(buffer.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(left, buffer.size())));
          auto got = static_cast<std::uint64_t>(in.gcount());
          if (got == 0) break;
          body->append(std::string_view{buffer.data(), got});
          left -= got;
        }
        if (left > 0) return {std::nullopt, s3::error{500, "InternalError", "The copy source could not be read."}};
        if (t.op == s3::operation::put_object) return {files->commit_object(body, t.bucket, t.key, info->content_type), std::nullopt};
        auto part = files->commit_part(body, t.upload_id, t.part_number);
        if (!part) return {std::nullopt, no_such_upload};
        return {part, std::nullopt};
      },
      [self = shared_from_this()](copied c) {
        if (c.refusal) return self->fail(*c.refusal, false);
        auto res = self->reply(200);
        res->set(bhttp::field::content_type, "application/xml");
        res->body() = self->target_.op == s3::operation::put_object ? s3::copy_object_xml(c.info->etag, c.info->modified)
                                                                      : s3::copy_part_xml(c.info->etag, c.info->modified);
        self->send(res);
      });
  }

  void receive_body() {
    continue_then([self = shared_from_this()] { self->start_body(); });
  }

  void start_body() {
    if (auto required = target_.required_length) {
      auto declared = header_->content_length();
      if (declared && *declared != *required)
        return fail({400, "InvalidRequest", "This URL takes a body of exactly " + std::to_string(*required) + " bytes."}, true);
    }
    body_parser_.emplace(std::move(*header_));
    body_parser_->body_limit(target_.required_length ? std::min(*target_.required_length, cfg().max_object_bytes)
                                                     : cfg().max_object_bytes);
    raw_remaining_.reset();
    if (!body_parser_->chunked()) raw_remaining_ = body_parser_->content_length().value_or(0);
    auto files = cfg().files;
    auto t = target_;
    on_disk(
      [files, t]() -> std::shared_ptr<storage::object_files::incoming> {
        if (t.op == s3::operation::put_object && files->closed(t.bucket, t.key)) return nullptr;
        return std::shared_ptr<storage::object_files::incoming>(files->receive().release());
      },
      [self = shared_from_this()](std::shared_ptr<storage::object_files::incoming> in) {
        if (!in) return self->fail(closed_key, true);
        self->incoming_ = std::move(in);
        self->chunk_.resize(chunk_size);  // held while this body is read (finish_body releases it)
        self->read_chunk();
      });
  }

  void read_chunk() {
    if (raw_remaining_) return read_raw_chunk();
    // A chunked body goes through Beast's parser (it reads in small pieces and copies).
    auto& body = body_parser_->get().body();
    body.data = chunk_.data();
    body.size = chunk_.size();
    stream_.expires_after(std::chrono::seconds{60});
    bhttp::async_read(stream_, buffer_, *body_parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec == bhttp::error::need_buffer) ec = {};
      if (ec == bhttp::error::body_limit)
        return self->fail({400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size"}, true);
      if (ec) return self->close();
      self->body_done_ = self->body_parser_->is_done();
      self->take_chunk(self->chunk_.size() - self->body_parser_->get().body().size);
    });
  }

  /// A body of known length is read straight from the socket into the 1 MiB chunk (the parser's
  /// reads are 64 KiB at most, each with a timer and a copy: that kept the I/O thread saturated at
  /// about 77 MiB/s). One timer per chunk bounds a stalled client.
  void read_raw_chunk() {
    auto want = static_cast<std::size_t>(std::min<std::uint64_t>(*raw_remaining_, chunk_.size()));
    if (want == 0) {
      body_done_ = true;
      return take_chunk(0);
    }
    // Bytes that arrived with the header are in the parser's buffer: they come first.
    if (buffer_.size() > 0) {
      auto n = std::min(want, buffer_.size());
      net::buffer_copy(net::buffer(chunk_.data(), n), buffer_.data());
      buffer_.consume(n);
      *raw_remaining_ -= n;
      body_done_ = *raw_remaining_ == 0;
      return take_chunk(n);
    }
    stream_.expires_never();
    body_timer_.expires_after(std::chrono::seconds{60});
    body_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      beast::error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
    net::async_read(stream_.socket(), net::buffer(chunk_.data(), want),
                    [self = shared_from_this()](beast::error_code ec, std::size_t got) {
                      self->body_timer_.cancel();
                      if (ec) return self->close();
                      if (self->failed_) return;  // answered already; the connection closes
                      *self->raw_remaining_ -= got;
                      self->body_done_ = *self->raw_remaining_ == 0;
                      self->take_chunk(got);
                    });
  }

  /// The disk thread appends `got` bytes of the chunk (write and MD5) and the hashing thread adds
  /// them to the SHA-256, while the socket is read for the next: at most `max_queued` chunks wait
  /// for either (memory stays bounded), in order (one thread each).
  void take_chunk(std::size_t got) {
    if (failed_) return;  // answered already (the store failed): the rest of the body is not kept
    auto bytes = std::make_shared<std::string>(chunk_.data(), got);
    auto in = incoming_;
    ++queued_;
    ++hashing_;
    on_disk([in, bytes] { return (in->append_unhashed(*bytes), true); }, [self = shared_from_this()](bool) {
      --self->queued_;
      self->after_chunk();
    });
    run_on(server_->hashing, [in, bytes] { return (in->add_to_sha256(*bytes), true); }, [self = shared_from_this()](bool) {
      --self->hashing_;
      self->after_chunk();
    });
    if (body_done_) return;
    if (queued_ < max_queued && hashing_ < max_queued) return read_chunk();
    reading_paused_ = true;
  }

  /// A chunk was written or hashed: the body is checked once both threads are done with all of it;
  /// reading goes on once both have room.
  void after_chunk() {
    if (failed_) return;
    if (body_done_) {
      if (queued_ == 0 && hashing_ == 0) finish_body();
    } else if (reading_paused_ && queued_ < max_queued && hashing_ < max_queued) {
      reading_paused_ = false;
      read_chunk();
    }
  }

  void finish_body() {
    std::string{}.swap(chunk_);  // a kept-alive connection holds no upload buffer
    const auto& req = body_parser_->get();
    // The signature's declared payload hash, x-amz-checksum-sha256 and Content-MD5 are checked
    // against what was received before anything becomes visible.
    auto in = incoming_;
    std::string declared_sha = payload_hash_.size() == 64 ? payload_hash_ : std::string{};
    std::string checksum = std::string{req["x-amz-checksum-sha256"]};
    std::string md5 = std::string{req[bhttp::field::content_md5]};
    auto sha = in->sha256();
    if (target_.required_length && in->size() != *target_.required_length)
      return fail({400, "IncompleteBody", "This URL takes a body of exactly " + std::to_string(*target_.required_length) + " bytes."}, false);
    if (!declared_sha.empty() && declared_sha != sha)
      return fail({400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed."}, false);
    if (!checksum.empty() && hex_of_base64(checksum) != sha)
      return fail({400, "BadDigest", "The SHA256 you specified did not match the calculated checksum."}, false);
    if (!md5.empty() && hex_of_base64(md5) != in->md5())
      return fail({400, "BadDigest", "The Content-MD5 you specified did not match what we received."}, false);
    auto files = cfg().files;
    auto t = target_;
    auto type = content_type_;
    incoming_.reset();
    on_disk(
      [files, t, type, in]() -> std::optional<storage::object_info> {
        if (t.op != s3::operation::put_object) return files->commit_part(in, t.upload_id, t.part_number);
        // Closed while the body arrived: not stored. Closed between the check and the commit (the
        // completion moved the key's object away meanwhile, or is about to and checks what it
        // moves): what this PUT stored goes again.
        if (files->closed(t.bucket, t.key)) return std::nullopt;
        auto info = files->commit_object(in, t.bucket, t.key, type);
        if (files->closed(t.bucket, t.key)) {
          files->remove(t.bucket, t.key);
          return std::nullopt;
        }
        return info;
      },
      [self = shared_from_this()](std::optional<storage::object_info> info) {
        if (!info) return self->fail(self->target_.op == s3::operation::put_object ? closed_key : no_such_upload, false);
        auto res = self->reply(200);
        res->set(bhttp::field::etag, "\"" + info->etag + "\"");
        self->send(res);
      });
  }

  void read_small_body() {
    continue_then([self = shared_from_this()] { self->start_small_body(); });
  }

  void start_small_body() {
    small_parser_.emplace(std::move(*header_));
    small_parser_->body_limit(1 << 20);
    bhttp::async_read(stream_, buffer_, *small_parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->complete_upload(self->small_parser_->get().body());
    });
  }

  // --- operations ---------------------------------------------------------------------------

  void complete_upload(const std::string& xml) {
    auto parts = s3::parse_complete_body(xml);
    if (!parts) return fail({400, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."}, false);
    auto files = cfg().files;
    auto t = target_;
    auto min = cfg().min_part_size;
    on_disk(
      [files, t, min, parts = *parts] {
        storage::object_info out;
        auto e = files->complete_upload(t.upload_id, parts, min, out);
        return std::pair{e, out};
      },
      [self = shared_from_this()](std::pair<storage::complete_error, storage::object_info> r) {
        using storage::complete_error;
        switch (r.first) {
          case complete_error::no_such_upload: return self->fail(no_such_upload, false);
          case complete_error::invalid_part: return self->fail({400, "InvalidPart", "One or more of the specified parts could not be found."}, false);
          case complete_error::invalid_part_order: return self->fail({400, "InvalidPartOrder", "The list of parts was not in ascending order."}, false);
          case complete_error::entity_too_small: return self->fail({400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size."}, false);
          case complete_error::checksum_mismatch:  // not asked for by S3 clients (no expected SHA-256)
          case complete_error::none: break;
        }
        auto res = self->reply(200);
        res->set(bhttp::field::content_type, "application/xml");
        res->body() = s3::complete_multipart_xml(self->path_, self->target_.bucket, self->target_.key, r.second.etag);
        self->send(res);
      });
  }

  void create_upload() {
    auto files = cfg().files;
    auto t = target_;
    auto type = content_type_;
    on_disk([files, t, type] { return files->create_upload(t.bucket, t.key, type); },
            [self = shared_from_this()](std::string id) {
              auto res = self->reply(200);
              res->set(bhttp::field::content_type, "application/xml");
              res->body() = s3::initiate_multipart_xml(self->target_.bucket, self->target_.key, id);
              self->send(res);
            });
  }

  void list_parts() {
    auto files = cfg().files;
    auto t = target_;
    on_read(
      [files, t]() -> std::optional<std::vector<s3::listed_part>> {
        if (!files->upload(t.upload_id)) return std::nullopt;
        std::vector<s3::listed_part> out;
        for (const auto& [n, info] : files->parts(t.upload_id)) out.push_back({n, info.etag, info.size, info.modified});
        return out;
      },
      [self = shared_from_this()](std::optional<std::vector<s3::listed_part>> parts) {
        if (!parts) return self->fail(no_such_upload, false);
        auto res = self->reply(200);
        res->set(bhttp::field::content_type, "application/xml");
        res->body() = s3::list_parts_xml(self->target_.bucket, self->target_.key, self->target_.upload_id, *parts);
        self->send(res);
      });
  }

  void abort_upload() {
    auto files = cfg().files;
    auto t = target_;
    on_disk([files, t] { return files->abort_upload(t.upload_id); }, [self = shared_from_this()](bool found) {
      if (!found) return self->fail(no_such_upload, false);
      self->send(self->reply(204));
    });
  }

  void delete_object() {
    auto files = cfg().files;
    auto t = target_;
    on_disk([files, t] { return files->remove(t.bucket, t.key); },
            [self = shared_from_this()](bool) { self->send(self->reply(204)); });
  }

  void send_object() {
    auto files = cfg().files;
    auto t = target_;
    on_read(
      [files, t]() -> std::optional<std::pair<storage::object_info, int>> {
        auto info = files->stat(t.bucket, t.key);
        auto path = files->data_path(t.bucket, t.key);
        if (!info || !path) return std::nullopt;
        int fd = ::open(path->c_str(), O_RDONLY);
        if (fd < 0) return std::nullopt;
        return std::pair{*info, fd};
      },
      [self = shared_from_this()](std::optional<std::pair<storage::object_info, int>> found) {
        if (!found) return self->fail({404, "NoSuchKey", "The specified key does not exist."}, false);
        self->fd_ = found->second;
        self->start_download(found->first);
      });
  }

  void start_download(const storage::object_info& info) {
    const auto& req = header_->get();
    auto etag = "\"" + info.etag + "\"";
    std::uint64_t first = 0, last = info.size == 0 ? 0 : info.size - 1;
    int status = 200;
    auto inm = std::string{req[bhttp::field::if_none_match]};
    if (!inm.empty() && (inm == etag || inm == "*" || inm == info.etag)) {
      status = 304;
    } else if (auto range = s3::parse_range(std::string{req[bhttp::field::range]}, info.size)) {
      if (range->unsatisfiable) return fail({416, "InvalidRange", "The requested range is not satisfiable"}, false);
      first = range->first;
      last = range->last;
      status = 206;
    }
    std::uint64_t length = (status == 304 || info.size == 0) ? 0 : last - first + 1;
    download_.emplace();
    download_->result(static_cast<bhttp::status>(status));
    download_->version(11);
    download_->keep_alive(keep_alive_);
    download_->set(bhttp::field::server, "contentlake");
    download_->set("x-amz-request-id", request_id_);
    download_->set(bhttp::field::etag, etag);
    download_->set(bhttp::field::last_modified, s3::http_date(info.modified));
    download_->set(bhttp::field::accept_ranges, "bytes");
    // Served from the store's origin: never sniffed into something active; an active type comes
    // as an attachment when the URL says so (the broker's URLs do, docs/api.md).
    download_->set("X-Content-Type-Options", "nosniff");
    if (!target_.response_content_disposition.empty())
      download_->set(bhttp::field::content_disposition, target_.response_content_disposition);
    if (status != 304)
      download_->set(bhttp::field::content_type,
                     target_.response_content_type.empty() ? info.content_type : target_.response_content_type);
    if (status == 206)
      download_->set(bhttp::field::content_range,
                     "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(info.size));
    bool head = target_.op == s3::operation::head_object;
    download_->content_length(head ? 0 : length);
    if (head) download_->set(bhttp::field::content_length, std::to_string(status == 304 ? 0 : (status == 206 ? length : info.size)));
    status_ = status;
    read_at_ = first;
    unread_ = remaining_ = head ? 0 : length;
    auto& body = download_->body();
    body.data = nullptr;
    body.size = 0;
    body.more = remaining_ > 0;
    serializer_.emplace(*download_);
    if (head) serializer_->split(true);
    read_ahead();  // the first chunk is read while the header is written
    writing_ = true;
    bhttp::async_write_header(stream_, *serializer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec) return self->close();
      if (self->target_.op == s3::operation::head_object || self->remaining_ == 0) return self->finish_download();
      self->write_ready();
    });
  }

  /// A download's body goes through two buffers: the next chunk is read from the file while this
  /// one is written, so the disk and the socket overlap, with no allocation per chunk.
  void read_ahead() {
    if (reading_file_ || unread_ == 0 || ready_ >= 0) return;
    int into = writing_buf_ == 0 ? 1 : 0;
    if (!out_[into]) out_[into].reset(new char[chunk_size]);
    auto n = static_cast<std::size_t>(std::min<std::uint64_t>(unread_, chunk_size));
    reading_file_ = true;
    on_read([fd = fd_, at = read_at_, buf = out_[into].get(), n] { return ::pread(fd, buf, n, static_cast<off_t>(at)); },
            [self = shared_from_this(), into](ssize_t got) {
              self->reading_file_ = false;
              if (!self->stream_.socket().is_open() || got <= 0) return self->close();
              self->read_at_ += static_cast<std::uint64_t>(got);
              self->unread_ -= std::min<std::uint64_t>(self->unread_, static_cast<std::uint64_t>(got));
              self->ready_ = into;
              self->ready_size_ = static_cast<std::size_t>(got);
              self->write_ready();
            });
  }

  /// Writes the chunk read last, unless a write is under way (its end comes back here).
  void write_ready() {
    if (writing_ || ready_ < 0) return read_ahead();
    writing_buf_ = ready_;
    ready_ = -1;
    auto size = ready_size_;
    auto& body = download_->body();
    body.data = out_[writing_buf_].get();
    body.size = size;
    body.more = remaining_ > size;
    writing_ = true;
    read_ahead();
    bhttp::async_write(stream_, *serializer_, [self = shared_from_this(), size](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      self->writing_buf_ = -1;
      if (ec == bhttp::error::need_buffer) ec = {};
      if (ec) return self->close();
      self->remaining_ -= std::min<std::uint64_t>(self->remaining_, size);
      if (self->remaining_ > 0) return self->write_ready();
      self->finish_download();
    });
  }

  void finish_download() {
    log(status_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    // Every read has ended: a kept-alive connection holds no download buffer while it waits.
    out_[0].reset();
    out_[1].reset();
    bool keep = download_->keep_alive();
    if (serializer_->is_done() || target_.op == s3::operation::head_object) return keep ? next_request() : close();
    auto& body = download_->body();
    body.data = nullptr;
    body.size = 0;
    body.more = false;
    bhttp::async_write(stream_, *serializer_, [self = shared_from_this(), keep](beast::error_code ec, std::size_t) {
      if (ec && ec != bhttp::error::need_buffer) return self->close();
      keep ? self->next_request() : self->close();
    });
  }

  // --- answers ------------------------------------------------------------------------------

  std::shared_ptr<bhttp::response<bhttp::string_body>> reply(int status) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(static_cast<bhttp::status>(status), 11);
    res->set(bhttp::field::server, "contentlake");
    res->set("x-amz-request-id", request_id_);
    return res;
  }

  /// Answers an S3 error; `unread_body`: the request's body (if any) was not read, so the
  /// connection closes after the answer.
  void fail(const s3::error& e, bool unread_body) {
    auto res = reply(e.status);
    res->set(bhttp::field::content_type, "application/xml");
    if (method_ != "HEAD") res->body() = s3::error_xml(e, path_, request_id_);
    if (unread_body) close_after_ = true;
    send(res);
  }

  void send(std::shared_ptr<bhttp::response<bhttp::string_body>> res) {
    bool keep = !close_after_ && keep_alive_;
    res->keep_alive(keep);
    res->prepare_payload();
    log(res->result_int());
    bhttp::async_write(stream_, *res, [self = shared_from_this(), res, keep](beast::error_code ec, std::size_t) {
      if (ec || !keep) return self->close();
      self->next_request();
    });
  }

  void log(unsigned status) {
    // The key path and the status only: the query string carries signatures.
    if (cfg().access_log) spdlog::info("s3 {} {} {}", method_, path_, status);
  }

  void next_request() {
    body_parser_.reset();
    small_parser_.reset();
    serializer_.reset();
    download_.reset();
    close_after_ = false;
    body_done_ = false;
    reading_paused_ = false;
    read_header();
  }

  void close() {
    // A read under way still uses the file: its end closes it (read_ahead).
    if (!reading_file_) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = -1;
    }
    body_timer_.cancel();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  net::steady_timer body_timer_{stream_.get_executor()};  ///< bounds a raw body read (read_raw_chunk)
  std::optional<std::uint64_t> raw_remaining_;             ///< body bytes still to read, when not chunked
  std::shared_ptr<s3_server::impl> server_;
  beast::flat_buffer buffer_;
  std::string chunk_;                ///< an upload body's read buffer, chunk_size while the body is read
  std::unique_ptr<char[]> out_[2];  ///< a download's two body buffers (read_ahead, write_ready), for its time
  int ready_ = -1;                   ///< the buffer read and not written yet, if any
  std::size_t ready_size_ = 0;
  int writing_buf_ = -1;             ///< the buffer being written, if any
  bool writing_ = false;             ///< a write of the download's (its header or a chunk) is under way
  bool reading_file_ = false;        ///< a pread is under way
  std::optional<bhttp::request_parser<bhttp::empty_body>> header_;
  std::optional<bhttp::request_parser<bhttp::buffer_body>> body_parser_;
  std::optional<bhttp::request_parser<bhttp::string_body>> small_parser_;
  std::optional<bhttp::response<bhttp::buffer_body>> download_;
  std::optional<bhttp::response_serializer<bhttp::buffer_body>> serializer_;
  std::shared_ptr<storage::object_files::incoming> incoming_;
  s3::request_target target_;
  std::string method_, path_, request_id_, payload_hash_, content_type_;
  static constexpr int max_queued = 4;  ///< body chunks waiting for the disk (or hashing) thread at most
  int queued_ = 0;   ///< chunks the disk thread has not written yet
  int hashing_ = 0;  ///< chunks the hashing thread has not added to the SHA-256 yet
  bool body_done_ = false;
  bool copy_source_ = false;  ///< the request names an x-amz-copy-source
  bool reading_paused_ = false;
  bool close_after_ = false;
  bool failed_ = false;  ///< a store call failed and was answered: nothing more of this request runs
  bool keep_alive_ = false;  ///< the request's, read before its parser is moved into a body parser
  int fd_ = -1;
  int status_ = 200;
  std::uint64_t read_at_ = 0, unread_ = 0;  ///< where the next pread starts; bytes not read yet
  std::uint64_t remaining_ = 0;             ///< body bytes not written yet
};

}  // namespace

void s3_server::impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // stopped
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::shared_ptr<s3_session> session;
    {
      std::lock_guard<std::mutex> guard{self->sessions_mutex};
      auto& all = self->sessions;
      all.erase(std::remove_if(all.begin(), all.end(), [](const auto& w) { return w.expired(); }), all.end());
      // Past the cap a new connection is closed at once: file descriptors stay bounded.
      if (static_cast<int>(all.size()) < self->cfg.max_connections) {
        session = std::make_shared<s3_session>(std::move(socket), self);
        all.push_back(session);
      }
    }
    if (session) session->start();
    else socket.close(ignored);
    self->accept();
  });
}

s3_server::s3_server(net::io_context& ioc, s3_server_config cfg) : impl_(std::make_shared<impl>(ioc, std::move(cfg))) {}

s3_server::~s3_server() {
  stop();
  impl_->disk.join();
  impl_->hashing.join();
  impl_->reads.join();
}

void s3_server::run() {
  impl_->accept();
}

std::uint16_t s3_server::port() const {
  return impl_->acceptor.local_endpoint().port();
}

void s3_server::stop() {
  net::post(impl_->acceptor.get_executor(), [impl = impl_] {
    beast::error_code ec;
    impl->acceptor.close(ec);
  });
  std::lock_guard<std::mutex> guard{impl_->sessions_mutex};
  for (auto& w : impl_->sessions)
    if (auto s = w.lock()) s->close_soon();
  impl_->sessions.clear();
}

}  // namespace cl::http
