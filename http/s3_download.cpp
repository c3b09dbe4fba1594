// A GET's or HEAD's answer on the embedded S3 listener: conditional and ranged, its body out of two
// 1 MiB buffers, the next `pread` (on the read threads) under way while the last is written.

#include "http/s3_session.hpp"

#include <unistd.h>

#include <algorithm>

namespace cl::http::s3_listener {

s3_download::~s3_download() {
  if (fd_ >= 0) ::close(fd_);
}

void s3_download::start(const storage::object_info& info) {
  const auto& req = session_->header()->get();
  const auto& target = session_->target();
  auto etag = "\"" + info.etag + "\"";
  std::uint64_t first = 0, last = info.size == 0 ? 0 : info.size - 1;
  int status = 200;
  auto inm = std::string{req[bhttp::field::if_none_match]};
  if (!inm.empty() && (inm == etag || inm == "*" || inm == info.etag)) {
    status = 304;
  } else if (auto range = s3::parse_range(std::string{req[bhttp::field::range]}, info.size)) {
    if (range->unsatisfiable) return session_->fail({416, "InvalidRange", "The requested range is not satisfiable"}, false);
    first = range->first;
    last = range->last;
    status = 206;
  }
  std::uint64_t length = (status == 304 || info.size == 0) ? 0 : last - first + 1;
  auto& res = response_;
  res.result(static_cast<bhttp::status>(status));
  res.version(11);
  res.keep_alive(session_->keep_alive());
  res.set(bhttp::field::server, "contentlake");
  res.set("x-amz-request-id", session_->request_id());
  res.set(bhttp::field::etag, etag);
  res.set(bhttp::field::last_modified, s3::http_date(info.modified));
  res.set(bhttp::field::accept_ranges, "bytes");
  // Served from the store's origin: never sniffed into something active; an active type comes
  // as an attachment when the URL says so (the broker's URLs do, docs/api.md).
  res.set("X-Content-Type-Options", "nosniff");
  if (!target.response_content_disposition.empty())
    res.set(bhttp::field::content_disposition, target.response_content_disposition);
  if (status != 304)
    res.set(bhttp::field::content_type, target.response_content_type.empty() ? info.content_type : target.response_content_type);
  if (status == 206)
    res.set(bhttp::field::content_range, "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(info.size));
  bool head = target.op == s3::operation::head_object;
  // A 304 carries no Content-Length (RFC 9110 8.6: else it must be the 200's); a HEAD says the GET's.
  if (status == 304)
    res.content_length(boost::none);
  else if (head)
    res.set(bhttp::field::content_length, std::to_string(status == 206 ? length : info.size));
  else
    res.content_length(length);
  status_ = status;
  read_at_ = first;
  unread_ = remaining_ = head ? 0 : length;
  auto& body = res.body();
  body.data = nullptr;
  body.size = 0;
  body.more = remaining_ > 0;
  serializer_.emplace(res);
  if (head) serializer_->split(true);
  read_ahead();  // the first chunk is read while the header is written
  writing_ = true;
  bhttp::async_write_header(session_->stream(), *serializer_, [self = shared_from_this(), head](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->session_->close();
    if (head || self->remaining_ == 0) return self->finish();
    self->write_ready();
  });
}

/// Reads the next chunk into the buffer not being written, unless a read is under way or a chunk
/// waits to be written.
void s3_download::read_ahead() {
  if (reading_file_ || unread_ == 0 || ready_ >= 0) return;
  int into = writing_buf_ == 0 ? 1 : 0;
  if (!out_[into]) out_[into].reset(new char[chunk_size]);
  auto n = static_cast<std::size_t>(std::min<std::uint64_t>(unread_, chunk_size));
  reading_file_ = true;
  session_->on_read([fd = fd_, at = read_at_, buf = out_[into].get(), n] { return ::pread(fd, buf, n, static_cast<off_t>(at)); },
                    [self = shared_from_this(), into](ssize_t got) {
                      self->reading_file_ = false;
                      if (!self->session_->stream().socket().is_open() || got <= 0) return self->session_->close();
                      self->read_at_ += static_cast<std::uint64_t>(got);
                      self->unread_ -= std::min<std::uint64_t>(self->unread_, static_cast<std::uint64_t>(got));
                      self->ready_ = into;
                      self->ready_size_ = static_cast<std::size_t>(got);
                      self->write_ready();
                    });
}

/// Writes the chunk read last, unless a write is under way (its end comes back here).
void s3_download::write_ready() {
  if (writing_ || ready_ < 0) return read_ahead();
  writing_buf_ = ready_;
  ready_ = -1;
  auto size = ready_size_;
  auto& body = response_.body();
  body.data = out_[writing_buf_].get();
  body.size = size;
  body.more = remaining_ > size;
  writing_ = true;
  read_ahead();
  bhttp::async_write(session_->stream(), *serializer_, [self = shared_from_this(), size](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    self->writing_buf_ = -1;
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) return self->session_->close();
    self->remaining_ -= std::min<std::uint64_t>(self->remaining_, size);
    if (self->remaining_ > 0) return self->write_ready();
    self->finish();
  });
}

void s3_download::finish() {
  session_->log(status_);
  bool keep = response_.keep_alive();
  auto after = [session = session_, keep] { keep ? session->next_request() : session->close(); };
  if (serializer_->is_done() || session_->target().op == s3::operation::head_object) return after();
  auto& body = response_.body();
  body.data = nullptr;
  body.size = 0;
  body.more = false;
  bhttp::async_write(session_->stream(), *serializer_, [self = shared_from_this(), after](beast::error_code ec, std::size_t) {
    if (ec && ec != bhttp::error::need_buffer) return self->session_->close();
    after();
  });
}

}  // namespace cl::http::s3_listener
