// A PUT's body on the embedded S3 listener, as a pipeline: the I/O thread reads the socket into a
// chunk (upload_chunk_size, aligned), and hands the chunk itself, no copy, to the stages that run
// beside each other and beside the next read: the write (straight from the chunk to the disk,
// bypassing the page cache: storage/objects/object_files.hpp), the SHA-256, and the MD5 when the
// client declared a Content-MD5 to check. A chunk goes back to the reader once every stage is done
// with it; at most `upload_chunks` an upload, so memory stays bounded, and one that arrives faster
// than the slowest stage waits for it. Declared sizes (`X-Cl-Length`, signed) are enforced as
// the bytes arrive; nothing is committed before its digests are checked.

#include "http/s3_session.hpp"

#include <boost/asio/read.hpp>

#include <algorithm>

namespace cl::http::s3_listener {

s3_upload::s3_upload(std::shared_ptr<s3_session> session)
  : session_(std::move(session)),
    body_timer_(session_->stream().get_executor()),
    writes_(net::make_strand(session_->server().writes)),
    sha256_(net::make_strand(session_->server().hashing)),
    md5_(net::make_strand(session_->server().hashing)) {}

void s3_upload::start() {
  const auto& target = session_->target();
  auto& header = session_->header();
  if (auto required = target.required_length) {
    auto declared = header->content_length();
    if (declared && *declared != *required)
      return session_->fail({400, "InvalidRequest", "This URL takes a body of exactly " + std::to_string(*required) + " bytes."}, true);
  }
  md5_wanted_ = header->get().find(bhttp::field::content_md5) != header->get().end();
  parser_.emplace(std::move(*header));
  auto limit = session_->cfg().max_object_bytes;
  parser_->body_limit(target.required_length ? std::min(*target.required_length, limit) : limit);
  if (!parser_->chunked()) raw_remaining_ = parser_->content_length().value_or(0);
  small_ = raw_remaining_ && *raw_remaining_ < upload_chunk_size;
  auto files = session_->cfg().files;
  auto t = target;
  session_->on_disk(
    [files, t]() -> std::shared_ptr<storage::object_files::incoming> {
      if (t.op == s3::operation::put_object && files->closed(t.bucket, t.key)) return nullptr;
      return std::shared_ptr<storage::object_files::incoming>(files->receive(upload_flush_every).release());
    },
    [self = shared_from_this()](std::shared_ptr<storage::object_files::incoming> in) {
      if (!in) return self->session_->fail(closed_key(), true);
      self->incoming_ = std::move(in);
      self->reading_ = self->free_chunk();
      self->read_chunk();
    });
}

s3_upload::~s3_upload() {
  session_->server().spare_chunks += spares_;
}

/// A chunk no stage reads, or a new one: the upload's first, or another while there are fewer
/// than `upload_chunks` and the listener has spares; null when every one is with the stages.
std::shared_ptr<s3_upload::chunk> s3_upload::free_chunk() {
  if (!free_.empty()) {
    auto c = std::move(free_.back());
    free_.pop_back();
    return c;
  }
  if (chunks_ == upload_chunks) return nullptr;
  if (chunks_ > 0) {
    auto& spare = session_->server().spare_chunks;
    if (spare.fetch_sub(1) <= 0) {
      ++spare;
      return nullptr;  // the stages give one back
    }
    ++spares_;
  }
  ++chunks_;
  return std::make_shared<chunk>(upload_chunk_size, !small_);
}

void s3_upload::read_chunk() {
  if (raw_remaining_) return read_raw_chunk();
  // A chunked body goes through Beast's parser (it reads in small pieces and copies); the read
  // ends when the chunk is full or the body is done.
  auto& body = parser_->get().body();
  body.data = reading_->data;
  body.size = upload_chunk_size;
  auto& stream = session_->stream();
  stream.expires_after(std::chrono::seconds{60});
  bhttp::async_read(stream, session_->buffer(), *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec == bhttp::error::body_limit)
      return self->session_->fail({400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size"}, true);
    if (ec) return self->session_->close();
    self->body_done_ = self->parser_->is_done();
    self->filled_ = upload_chunk_size - self->parser_->get().body().size;
    self->take_chunk();
  });
}

/// Bytes a body's read waits for before it is woken (SO_RCVLOWAT), at most.
constexpr std::size_t receive_low_water = 1 << 20;

/// A body of known length is read straight from the socket into the chunk (the parser's reads
/// are 64 KiB at most, each with a timer and a copy) until the chunk is full or the body is done:
/// every chunk but the last is whole, so each write is aligned. Each read waits until a large
/// piece has arrived (SO_RCVLOWAT: never more than the body has left to come), not for each
/// segment the client sends (curl sends 64 KiB at a time: sixteen times the wake-ups and reads).
/// One timer per read bounds a stalled client.
void s3_upload::read_raw_chunk() {
  auto want = static_cast<std::size_t>(std::min<std::uint64_t>(*raw_remaining_, upload_chunk_size - filled_));
  if (want == 0) return after_raw_read(0);
  // Bytes that arrived with the header are in the parser's buffer: they come first.
  auto& buffer = session_->buffer();
  if (buffer.size() > 0) {
    auto n = std::min(want, buffer.size());
    net::buffer_copy(net::buffer(reading_->data + filled_, n), buffer.data());
    buffer.consume(n);
    return after_raw_read(n);
  }
  auto& stream = session_->stream();
  stream.expires_never();
  beast::error_code ignored;
  stream.socket().set_option(
    net::socket_base::receive_low_watermark(static_cast<int>(std::min(want, receive_low_water))), ignored);
  body_timer_.expires_after(std::chrono::seconds{60});
  body_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;
    beast::error_code ignored;
    self->session_->stream().socket().cancel(ignored);
  });
  stream.socket().async_read_some(net::buffer(reading_->data + filled_, want),
                                  [self = shared_from_this()](beast::error_code ec, std::size_t got) {
                                    self->body_timer_.cancel();
                                    if (ec) return self->session_->close();
                                    if (self->session_->failed()) return;  // answered already; the connection closes
                                    self->after_raw_read(got);
                                  });
}

void s3_upload::after_raw_read(std::size_t got) {
  filled_ += got;
  *raw_remaining_ -= got;
  body_done_ = *raw_remaining_ == 0;
  if (body_done_) {  // the next request's header is read as it comes
    beast::error_code ignored;
    session_->stream().socket().set_option(net::socket_base::receive_low_watermark(1), ignored);
  }
  if (body_done_ || filled_ == upload_chunk_size) return take_chunk();
  read_raw_chunk();
}

/// The chunk read goes to every stage; the socket is read into a free chunk meanwhile, or once
/// one is free (after_stage).
void s3_upload::take_chunk() {
  if (session_->failed()) return;  // answered already (the store failed): the rest is not kept
  auto c = std::move(reading_);
  auto size = std::exchange(filled_, 0);
  if (size > 0) {
    using incoming = storage::object_files::incoming;
    queue(writes_, &incoming::write, c, size);
    queue(sha256_, &incoming::add_to_sha256, c, size);
    if (md5_wanted_) queue(md5_, &incoming::add_to_md5, c, size);
  }
  if (body_done_) {
    if (pending_ == 0) finish_body();
    return;
  }
  if (c->pending == 0) free_.push_back(std::move(c));  // else after_stage gives it back
  reading_ = free_chunk();
  if (!reading_) {
    reading_paused_ = true;
    return;
  }
  read_chunk();
}

/// One stage's job for `size` bytes of `c`: the chunk stays alive (and out of the free list)
/// until every job reading it has run.
void s3_upload::queue(stage& where, void (storage::object_files::incoming::*step)(std::string_view),
                      const std::shared_ptr<chunk>& c, std::size_t size) {
  ++c->pending;
  ++pending_;
  session_->run_on(
    where, [in = incoming_, bytes = std::string_view{c->data, size}, step] { return ((*in).*step)(bytes), true; },
    [self = shared_from_this(), c](bool) { self->after_stage(c); });
}

/// A stage is done with a chunk: the body is checked once every stage is done with all of it;
/// a chunk no stage reads any more is read into next.
void s3_upload::after_stage(const std::shared_ptr<chunk>& c) {
  --pending_;
  if (--c->pending == 0 && !body_done_) free_.push_back(c);
  if (session_->failed()) return;
  if (body_done_) {
    if (pending_ == 0) finish_body();
  } else if (reading_paused_) {
    reading_ = free_chunk();
    if (!reading_) return;
    reading_paused_ = false;
    read_chunk();
  }
}

void s3_upload::after_stages(std::function<void()> then) {
  auto noop = [] { return true; };
  session_->run_on(writes_, noop, [self = shared_from_this(), noop, then = std::move(then)](bool) mutable {
    self->session_->run_on(self->sha256_, noop, [self, noop, then = std::move(then)](bool) mutable {
      self->session_->run_on(self->md5_, noop, [then = std::move(then)](bool) { then(); });
    });
  });
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
  free_.clear();  // a kept-alive connection holds no upload chunk
  reading_.reset();
  session_->server().spare_chunks += std::exchange(spares_, 0);
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
      session->empty_trash_soon();
    });
}

}  // namespace cl::http::s3_listener
