// A PUT's body on the embedded S3 listener: in 1 MiB chunks, each written (and MD5'd) on the disk
// thread while the hashing thread adds it to the SHA-256 and the socket is read for the next; one
// buffer a connection, held while its body is read (an idle connection holds none). Declared
// sizes (`X-Cl-Length`, signed) are enforced as the bytes arrive.

#include "http/s3_session.hpp"

#include <boost/asio/read.hpp>

#include <algorithm>

namespace cl::http::s3_listener {

s3_upload::s3_upload(std::shared_ptr<s3_session> session)
  : session_(std::move(session)), body_timer_(session_->stream().get_executor()) {}

void s3_upload::start() {
  const auto& target = session_->target();
  auto& header = session_->header();
  if (auto required = target.required_length) {
    auto declared = header->content_length();
    if (declared && *declared != *required)
      return session_->fail({400, "InvalidRequest", "This URL takes a body of exactly " + std::to_string(*required) + " bytes."}, true);
  }
  parser_.emplace(std::move(*header));
  auto limit = session_->cfg().max_object_bytes;
  parser_->body_limit(target.required_length ? std::min(*target.required_length, limit) : limit);
  if (!parser_->chunked()) raw_remaining_ = parser_->content_length().value_or(0);
  auto files = session_->cfg().files;
  auto t = target;
  session_->on_disk(
    [files, t]() -> std::shared_ptr<storage::object_files::incoming> {
      if (t.op == s3::operation::put_object && files->closed(t.bucket, t.key)) return nullptr;
      return std::shared_ptr<storage::object_files::incoming>(files->receive().release());
    },
    [self = shared_from_this()](std::shared_ptr<storage::object_files::incoming> in) {
      if (!in) return self->session_->fail(closed_key(), true);
      self->incoming_ = std::move(in);
      self->chunk_.resize(chunk_size);  // held while this body is read (finish_body releases it)
      self->read_chunk();
    });
}

void s3_upload::read_chunk() {
  if (raw_remaining_) return read_raw_chunk();
  // A chunked body goes through Beast's parser (it reads in small pieces and copies).
  auto& body = parser_->get().body();
  body.data = chunk_.data();
  body.size = chunk_.size();
  auto& stream = session_->stream();
  stream.expires_after(std::chrono::seconds{60});
  bhttp::async_read(stream, session_->buffer(), *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec == bhttp::error::body_limit)
      return self->session_->fail({400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size"}, true);
    if (ec) return self->session_->close();
    self->body_done_ = self->parser_->is_done();
    self->take_chunk(self->chunk_.size() - self->parser_->get().body().size);
  });
}

/// A body of known length is read straight from the socket into the 1 MiB chunk (the parser's
/// reads are 64 KiB at most, each with a timer and a copy: that kept the I/O thread saturated at
/// about 77 MiB/s). One timer per chunk bounds a stalled client.
void s3_upload::read_raw_chunk() {
  auto want = static_cast<std::size_t>(std::min<std::uint64_t>(*raw_remaining_, chunk_.size()));
  if (want == 0) {
    body_done_ = true;
    return take_chunk(0);
  }
  // Bytes that arrived with the header are in the parser's buffer: they come first.
  auto& buffer = session_->buffer();
  if (buffer.size() > 0) {
    auto n = std::min(want, buffer.size());
    net::buffer_copy(net::buffer(chunk_.data(), n), buffer.data());
    buffer.consume(n);
    *raw_remaining_ -= n;
    body_done_ = *raw_remaining_ == 0;
    return take_chunk(n);
  }
  auto& stream = session_->stream();
  stream.expires_never();
  body_timer_.expires_after(std::chrono::seconds{60});
  body_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;
    beast::error_code ignored;
    self->session_->stream().socket().cancel(ignored);
  });
  net::async_read(stream.socket(), net::buffer(chunk_.data(), want), [self = shared_from_this()](beast::error_code ec, std::size_t got) {
    self->body_timer_.cancel();
    if (ec) return self->session_->close();
    if (self->session_->failed()) return;  // answered already; the connection closes
    *self->raw_remaining_ -= got;
    self->body_done_ = *self->raw_remaining_ == 0;
    self->take_chunk(got);
  });
}

/// The disk thread appends `got` bytes of the chunk (write and MD5) and the hashing thread adds
/// them to the SHA-256, while the socket is read for the next: at most `max_queued` chunks wait
/// for either (memory stays bounded), in order (one thread each).
void s3_upload::take_chunk(std::size_t got) {
  if (session_->failed()) return;  // answered already (the store failed): the rest is not kept
  auto bytes = std::make_shared<std::string>(chunk_.data(), got);
  auto in = incoming_;
  ++queued_;
  ++hashing_;
  session_->on_disk([in, bytes] { return (in->append_unhashed(*bytes), true); }, [self = shared_from_this()](bool) {
    --self->queued_;
    self->after_chunk();
  });
  session_->run_on(session_->server().hashing, [in, bytes] { return (in->add_to_sha256(*bytes), true); },
                   [self = shared_from_this()](bool) {
                     --self->hashing_;
                     self->after_chunk();
                   });
  if (body_done_) return;
  if (queued_ < max_queued && hashing_ < max_queued) return read_chunk();
  reading_paused_ = true;
}

/// A chunk was written or hashed: the body is checked once both threads are done with all of it;
/// reading goes on once both have room.
void s3_upload::after_chunk() {
  if (session_->failed()) return;
  if (body_done_) {
    if (queued_ == 0 && hashing_ == 0) finish_body();
  } else if (reading_paused_ && queued_ < max_queued && hashing_ < max_queued) {
    reading_paused_ = false;
    read_chunk();
  }
}

/// The signature's declared payload hash, x-amz-checksum-sha256 and Content-MD5 against what was
/// received, and the length a presigned URL requires.
std::optional<s3::error> s3_upload::digest_refusal() const {
  const auto& req = parser_->get();
  const auto& target = session_->target();
  const auto& declared = session_->payload_hash();
  auto checksum = std::string{req["x-amz-checksum-sha256"]};
  auto md5 = std::string{req[bhttp::field::content_md5]};
  auto sha = incoming_->sha256();
  if (target.required_length && incoming_->size() != *target.required_length)
    return s3::error{400, "IncompleteBody", "This URL takes a body of exactly " + std::to_string(*target.required_length) + " bytes."};
  if (declared.size() == 64 && declared != sha)
    return s3::error{400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed."};
  if (!checksum.empty() && s3::hex_of_base64(checksum) != sha)
    return s3::error{400, "BadDigest", "The SHA256 you specified did not match the calculated checksum."};
  if (!md5.empty() && s3::hex_of_base64(md5) != incoming_->md5())
    return s3::error{400, "BadDigest", "The Content-MD5 you specified did not match what we received."};
  return std::nullopt;
}

/// Nothing becomes visible before its digests are checked.
void s3_upload::finish_body() {
  std::string{}.swap(chunk_);  // a kept-alive connection holds no upload buffer
  if (auto refused = digest_refusal()) return session_->fail(*refused, false);
  auto files = session_->cfg().files;
  auto t = session_->target();
  auto type = session_->content_type();
  auto in = std::move(incoming_);
  session_->on_disk(
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
    [session = session_](std::optional<storage::object_info> info) {
      if (!info) return session->fail(session->target().op == s3::operation::put_object ? closed_key() : no_such_upload(), false);
      auto res = session->reply(200);
      res->set(bhttp::field::etag, "\"" + info->etag + "\"");
      session->send(res);
    });
}

}  // namespace cl::http::s3_listener
