// The embedded S3 listener's connection: header, signature, bucket, dispatch and answers
// (http/s3_session.hpp says how the jobs are split).

#include "http/s3_session.hpp"

#include "domain/clock.hpp"
#include "domain/ids.hpp"
#include "domain/sigv4.hpp"

#include <spdlog/spdlog.h>

namespace cl::http {

s3_server::impl::impl(boost::asio::io_context& ioc, s3_server_config c) : ioc(ioc), acceptor(ioc), cfg(std::move(c)), disk(1), writes(2), hashing(2) {
  boost::beast::error_code ec;
  boost::asio::ip::tcp::endpoint ep{boost::asio::ip::make_address(cfg.host, ec), cfg.port};
  if (ec) throw std::runtime_error("blobs.embedded.listen: " + cfg.host + " is not an IP address");
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("blobs.embedded.listen: cannot listen on " + cfg.host + ":" + std::to_string(cfg.port) + ": " + ec.message());
}

namespace s3_listener {

const s3::error& no_such_upload() {
  static const s3::error e{404, "NoSuchUpload", "The specified upload does not exist."};
  return e;
}

const s3::error& closed_key() {
  static const s3::error e{403, "AccessDenied", "This key takes no new bytes: its upload was completed or aborted."};
  return e;
}

s3_session::s3_session(tcp::socket socket, std::shared_ptr<s3_server::impl> server)
  : stream_(std::move(socket)), server_(std::move(server)) {}

void s3_session::close_soon() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
}

void s3_session::store_failed(bool full, const std::string& what) {
  if (failed_) return;
  failed_ = true;
  spdlog::error("s3: {} {}: {}", method_, path_, what);
  auto answer = [self = shared_from_this(), full](bool = true) {
    if (full)
      return self->fail({507, "InsufficientStorage", "The object store has no room for this request; nothing was stored."}, true);
    self->fail({500, "InternalError", "The object store failed; nothing was stored. Retry."}, true);
  };
  if (!upload_ || !upload_->holds_body()) return answer();
  // The chunks still queued for the body's stages hold its temporary files, which go with the
  // last of them: answer after them (each stage runs its jobs in order), so that when the client
  // reads the answer nothing of the body is left on disk.
  upload_->drop_body();
  upload_->after_stages(std::move(answer));
}

void s3_session::read_header() {
  header_.emplace();
  header_->header_limit(16 * 1024);
  header_->body_limit(cfg().max_object_bytes);
  stream_.expires_after(std::chrono::seconds{60});
  bhttp::async_read_header(stream_, buffer_, *header_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->close();
    self->dispatch();
  });
}

std::optional<s3::error> s3_session::authenticate(const std::vector<std::pair<std::string, std::string>>& query) {
  const auto& req = header_->get();
  domain::sigv4::received_request r;
  r.method = method_;
  r.path = path_;
  r.query = query;
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
  if (!verdict) return s3::auth_error(verdict.why, verdict.detail, in_query);
  payload_hash_ = verdict.payload_hash;
  return std::nullopt;
}

void s3_session::dispatch() {
  const auto& req = header_->get();
  method_ = std::string{req.method_string()};
  keep_alive_ = req.keep_alive();
  request_id_ = domain::random_id("req");
  if (req.count(bhttp::field::host) != 1) return fail({400, "InvalidArgument", "A request has exactly one Host header."}, true);
  auto split = s3::split_target(std::string_view{req.target().data(), req.target().size()});
  if (!split) return fail({400, "InvalidURI", "Couldn't parse the specified URI."}, true);
  path_ = split->path;
  auto classified = s3::classify(method_, path_, split->query);
  if (auto* e = std::get_if<s3::error>(&classified)) return fail(*e, true);
  target_ = std::get<s3::request_target>(classified);
  // CopyObject and UploadPartCopy are served; on any other operation a copy source is refused
  // rather than ignored.
  bool copy_source = req.find("x-amz-copy-source") != req.end();
  if (copy_source && target_.op != s3::operation::upload_part && target_.op != s3::operation::put_object)
    return fail({501, "NotImplemented", "A header you provided implies functionality that is not implemented (x-amz-copy-source)."}, true);
  if (auto refused = authenticate(split->query)) return fail(*refused, true);
  // aws-chunked bodies (chunk signatures, trailing checksums) are not decoded: refused, so their
  // framing is never stored as an object's bytes.
  auto encoding = req[bhttp::field::content_encoding];
  if (s3::aws_chunked(payload_hash_, std::string_view{encoding.data(), encoding.size()}))
    return fail({501, "NotImplemented", "aws-chunked request bodies are not supported by this store; send the body as is (UNSIGNED-PAYLOAD or its SHA-256)."}, true);
  if (target_.bucket != cfg().bucket) return fail({404, "NoSuchBucket", "The specified bucket does not exist"}, true);
  content_type_ = std::string{req[bhttp::field::content_type]};
  if (content_type_.empty()) content_type_ = "binary/octet-stream";
  auto self = shared_from_this();
  switch (target_.op) {
    case s3::operation::put_object:
    case s3::operation::upload_part: return copy_source ? copy_object(self) : receive_body(self);
    case s3::operation::complete_multipart_upload: return complete_upload(self);
    case s3::operation::get_object:
    case s3::operation::head_object: return send_object(self);
    case s3::operation::delete_object: return delete_object(self);
    case s3::operation::create_multipart_upload: return create_upload(self);
    case s3::operation::list_parts: return list_parts(self);
    case s3::operation::abort_multipart_upload: return abort_upload(self);
  }
}

void s3_session::continue_then(std::function<void()> next) {
  auto expect = header_->get()[bhttp::field::expect];
  if (!beast::iequals(expect, "100-continue")) return next();
  auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, 11);
  bhttp::async_write(stream_, *cont, [self = shared_from_this(), cont, next = std::move(next)](beast::error_code ec, std::size_t) {
    if (ec) return self->close();
    next();
  });
}

answer s3_session::reply(int status) {
  auto res = std::make_shared<bhttp::response<bhttp::string_body>>(static_cast<bhttp::status>(status), 11);
  res->set(bhttp::field::server, "contentlake");
  res->set("x-amz-request-id", request_id_);
  return res;
}

void s3_session::fail(const s3::error& e, bool unread_body) {
  auto res = reply(e.status);
  res->set(bhttp::field::content_type, "application/xml");
  if (method_ != "HEAD") res->body() = s3::error_xml(e, path_, request_id_);
  if (unread_body) close_after_ = true;
  send(res);
}

void s3_session::send(answer res) {
  bool keep = !close_after_ && keep_alive_;
  res->keep_alive(keep);
  res->prepare_payload();
  log(res->result_int());
  bhttp::async_write(stream_, *res, [self = shared_from_this(), res, keep](beast::error_code ec, std::size_t) {
    if (ec || !keep) return self->close();
    self->next_request();
  });
}

void s3_session::log(unsigned status) {
  if (cfg().access_log) spdlog::info("s3 {} {} {}", method_, path_, status);
}

void s3_session::next_request() {
  upload_.reset();
  download_.reset();  // its file closes and its buffers go once its last read has ended
  close_after_ = false;
  read_header();
}

void s3_session::close() {
  if (upload_) upload_->stop();
  upload_.reset();
  download_.reset();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

}  // namespace s3_listener
}  // namespace cl::http
