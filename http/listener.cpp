// Admission and connection slots (docs/architecture.md, "Request path"):
//
// - **Admission before the body.** A request with a body is admitted on its header (route, token,
//   scope, rate limit); only a yes reads the body, in pieces with a
//   deadline that grows with what arrived (`http.min_body_bytes_per_second`). The verified caller
//   travels with the request (an `admission` ticket), so auth and the limiter are not asked twice.
//   When the token is in the token cache the header is decided on the I/O thread (token cache, scope,
//   rate table: no actor would be asked); otherwise by a coordinator of its own, which asks auth.
//   Either way the request itself then gets its coordinator. A body of known length that came whole
//   in the header's read (a small JSON body from a keep-alive client) is taken at once instead, and
//   the request checked as a whole: nothing more is read from the socket for it, and the admission
//   step, its post back to the connection and an async read that would find the bytes buffered are
//   saved.
// - **Connections at the cap.** A new connection at `http.max_connections` takes the slot of the one
//   that has waited longest for a request header or in sending a body; only when every connection is
//   serving does it get 503 (at most 64 at once). A keep-alive connection waits from the moment the
//   last write of its answer begins (its client may read the answer before that write's completion
//   runs on a busy I/O thread); chosen then, it closes once the answer is out. While a request is in flight the session waits for
//   its socket to be readable: a client that closes gives its slot back at once, and a held request
//   (an event stream, a long poll) learns of it through `api_request::peer_gone` and ends.

#include "http/resource_metadata.hpp"
#include "http/listener.hpp"
#include "http/answers.hpp"

#include "domain/access_log.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <ctime>
#include <iterator>
#include <limits>
#include <optional>

namespace cl::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {


/// Headers that carry one value: a second copy is refused, never resolved by picking one (an edge
/// cache in front may pick the other). In the order a problem names the first of them repeated;
/// `singular` indexes them.
constexpr std::string_view singular_headers[] = {"Authorization", "Idempotency-Key", "Content-Type", "X-Usage-Purpose",
                                                 "Host"};
enum singular : std::size_t { authorization, idempotency_key, content_type, usage_purpose, host };

/// A request's header block read in one pass over its fields (no lookup by name in Beast's
/// field tree: 19 of them per request otherwise): the request as the handler sees it, without
/// its body (read later, once admitted), and what `header_problem` needs. A header sent more
/// than once is read from its first copy, as `fields::operator[]` would.
struct header_read {
  domain::api_request request;
  int singular_count[std::size(singular_headers)] = {};  ///< copies of each of `singular_headers`
  int transfer_encoding_count = 0;
  beast::string_view transfer_encoding;  ///< its first copy's value
};

header_read read_header(const bhttp::request<bhttp::string_body>& req) {
  header_read h;
  auto& out = h.request;
  out.method = std::string{req.method_string()};
  auto target = req.target();
  auto q = target.find('?');
  out.path = std::string{target.substr(0, q)};
  if (q != beast::string_view::npos) out.query = std::string{target.substr(q + 1)};
  // Whether the first copy of each header was taken (the singular ones count their copies).
  bool accept = false, if_none_match = false, last_event_id = false, position = false, origin = false,
       mcp_version = false, request_id = false;
  beast::string_view rid;
  auto first = [](bool& taken, std::string& into, beast::string_view value) {
    if (taken) return;
    taken = true;
    into.assign(value.data(), value.size());
  };
  // A singular header's first copy is read, and every copy counted.
  auto singular_first = [&h](singular i, std::string& into, beast::string_view value) {
    if (h.singular_count[i]++ != 0) return false;
    into.assign(value.data(), value.size());
    return true;
  };
  for (const auto& f : req) {
    auto value = f.value();
    switch (f.name()) {
      case bhttp::field::authorization: singular_first(singular::authorization, out.authorization, value); break;
      case bhttp::field::content_type: singular_first(singular::content_type, out.content_type, value); break;
      case bhttp::field::host: singular_first(singular::host, out.host, value); break;
      case bhttp::field::accept: first(accept, out.accept, value); break;
      case bhttp::field::if_none_match: first(if_none_match, out.if_none_match, value); break;
      case bhttp::field::origin: first(origin, out.origin, value); break;
      case bhttp::field::transfer_encoding:
        if (h.transfer_encoding_count++ == 0) h.transfer_encoding = value;
        break;
      default: {
        auto name = f.name_string();
        if (beast::iequals(name, "Idempotency-Key")) {
          if (singular_first(singular::idempotency_key, out.idempotency_key, value)) out.has_idempotency_key = true;
        } else if (beast::iequals(name, "X-Usage-Purpose")) {
          if (h.singular_count[singular::usage_purpose]++ == 0) out.usage_purpose = std::string{value};  // optional
        } else if (beast::iequals(name, "X-Request-Id")) {
          if (!request_id) rid = value;
          request_id = true;
        } else if (beast::iequals(name, "Last-Event-ID")) {
          first(last_event_id, out.last_event_id, value);
        } else if (beast::iequals(name, "Content-Lake-Position")) {
          first(position, out.position, value);
        } else if (beast::iequals(name, "MCP-Protocol-Version")) {
          first(mcp_version, out.mcp_protocol_version, value);
        }
      }
    }
  }
  out.request_id = domain::is_valid_request_id({rid.data(), rid.size()}) ? std::string{rid} : domain::new_request_id();
  return h;
}

/// What is wrong with a request header block before any of it is used: a repeated singular
/// header (400 DUPLICATE_PARAMETER), no `Host` in HTTP/1.1 (400 MALFORMED_REQUEST, RFC 9112
/// 3.2), a `Transfer-Encoding` other than `chunked` (501, RFC 9112 6.1). nullopt when fine.
std::optional<domain::api_reply> header_problem(const header_read& h, unsigned version) {
  for (std::size_t i = 0; i < std::size(singular_headers); ++i)
    if (h.singular_count[i] > 1) {
      std::string name{singular_headers[i]};
      return domain::api_reply::failure(domain::error_id::duplicate_parameter,
                                        "The header " + name + " was sent more than once.", {{name, "send it once"}});
    }
  if (version >= 11 && h.singular_count[singular::host] == 0)
    return domain::api_reply::failure(domain::error_id::malformed_request, "An HTTP/1.1 request needs a Host header.",
                                      {{"Host", "required"}});
  if (h.transfer_encoding_count > 0) {
    auto value = h.transfer_encoding;
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (h.transfer_encoding_count > 1 || !beast::iequals(value, "chunked"))
      return domain::api_reply::failure(domain::error_id::transfer_encoding_unsupported,
                                        "Only Transfer-Encoding: chunked is supported.",
                                        {{"Transfer-Encoding", "only chunked"}});
  }
  return std::nullopt;
}

/// 503 SERVER_OVERLOADED for a connection over the cap, or one that came while draining.
domain::api_reply unavailable_reply(bool overloaded) {
  auto r = domain::api_reply::failure(domain::error_id::server_overloaded,
                                      overloaded ? "Too many open connections; retry shortly."
                                                 : "The server is shutting down; retry shortly.");
  r.retry_after_seconds = 1;
  return r;
}

/// The answer to a request that is not well-formed HTTP/1.1 or over a limit (the parser's `ec`).
domain::api_reply protocol_error_reply(beast::error_code ec, const listener_context& ctx) {
  if (ec == bhttp::error::header_limit)
    return domain::api_reply::failure(domain::error_id::limit_exceeded,
                                      "The request header block exceeds " + std::to_string(ctx.header_limit) + " bytes.",
                                      {{"headers", "at most " + std::to_string(ctx.header_limit) + " bytes"}});
  if (ec == bhttp::error::body_limit)
    return domain::api_reply::failure(domain::error_id::limit_exceeded,
                                      "The request body exceeds " + std::to_string(ctx.body_limit) + " bytes.",
                                      {{"body", "at most " + std::to_string(ctx.body_limit) + " bytes"}});
  return domain::api_reply::failure(domain::error_id::malformed_request,
                                    "The request is not well-formed HTTP/1.1: " + ec.message() + ".");
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

}  // namespace

/// One access log line for an answer of listener `ctx` (none when the access logger is off).
void log_access(const listener_context& ctx, domain::access_entry e, const domain::api_reply& r) {
  // Looked up once per thread (spdlog's registry takes a lock), and again once that logger is gone.
  thread_local std::weak_ptr<spdlog::logger> cached;
  auto logger = cached.lock();
  if (!logger) {
    logger = spdlog::get("access");
    if (!logger) return;
    cached = logger;
  }
  e.listener = ctx.name;
  e.tenant = r.tenant;
  e.client_id = r.client_id;
  if (r.error) e.reason = domain::entry(r.error->id).reason;
  logger->info(domain::access_log_line(e, domain::iso8601_now()));
}

bool evict_one(listener_context& ctx);

/// Whether a connection may give up its slot to a new one at the cap.
enum class evictable : int {
  waiting = 0,  ///< for a request header, or closing after an answer
  sending = 1,  ///< a request body
  never = 2,    ///< its request is being admitted or served
  finishing = 3,  ///< the last write of a keep-alive answer is under way: closed once it completes
};

/// A connection's hold on one of `http.max_connections` (`listener_context::connections`) and
/// whether, and since when, it may give it up to a new connection at the cap (`evict_one`). Read
/// by other connections' accepts, so atomic.
class connection_slot {
public:
  explicit connection_slot(listener_context& ctx) : ctx_(ctx) {}
  ~connection_slot() { release(); }

  /// Takes a slot; false when the cap is reached and no connection gives one up.
  bool take() {
    if (++ctx_.connections > ctx_.max_connections && !evict_one(ctx_)) {
      --ctx_.connections;
      return false;
    }
    held_ = true;
    if (ctx_.stats) ctx_.stats->add_connections(1);
    return true;
  }

  /// Gives the slot up (at most once): the connection's end, or its eviction.
  void release() {
    if (!held_.exchange(false)) return;
    --ctx_.connections;
    if (ctx_.stats) ctx_.stats->add_connections(-1);
  }

  bool held() const { return held_; }
  void mark(evictable e, std::int64_t since_ns = 0) {
    since_ns_ = since_ns != 0 ? since_ns : steady_ns();
    state_ = static_cast<int>(e);
  }
  bool is(evictable e) const { return state_ == static_cast<int>(e); }
  std::int64_t since_ns() const { return since_ns_.load(); }

private:
  listener_context& ctx_;
  std::atomic<bool> held_{false};
  std::atomic<int> state_{static_cast<int>(evictable::waiting)};
  std::atomic<std::int64_t> since_ns_{steady_ns()};
};

/// A session's wait for a request header (the first, or the next on a kept connection) and its
/// bound; kept by the listener's sweep (`listener::sweep`), which reads it from another thread,
/// not by a timer of the stream armed and cancelled on every request.
class header_wait {
public:
  void start(std::chrono::seconds bound) {
    deadline_ns_.store(steady_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(bound).count(),
                       std::memory_order_relaxed);
  }
  void end() { deadline_ns_.store(0, std::memory_order_relaxed); }
  /// Whether the wait has lasted past its bound at `now_ns`.
  bool overdue(std::int64_t now_ns) const {
    auto deadline = deadline_ns_.load(std::memory_order_relaxed);
    return deadline != 0 && deadline <= now_ns;
  }

private:
  std::atomic<std::int64_t> deadline_ns_{0};  ///< steady_ns; 0 while no header is awaited
};

/// Where a streamed body's chunks come from: pulled at once, or handed over later.
struct chunk_source {
  std::function<std::optional<std::string>()> now;
  std::function<void(std::function<void(std::optional<std::string>)>)> later;
};

/// One connection: reads a request, hands it to the handler, writes the answer, repeats.
/// A whole answer of ours (answers::whole_bytes): header block and body in one gather write, each
/// write as large as the socket takes (asio's own condition caps one at 64 KiB: eleven writes for
/// the 660 KB OpenAPI document); Beast's messages by its serializer. A request header is read and
/// a whole answer written on the socket itself, not through `tcp_stream`: no stream timer is armed
/// then (the sweep bounds the wait for a header), so its timed-operation layer is skipped on the
/// hot path. Body reads and lingering keep the stream's deadlines.
template <class Stream, class Handler>
void send_answer(Stream& stream, answers::answer_bytes& a, Handler done) {
  std::array<net::const_buffer, 2> parts{net::buffer(a.header), net::buffer(a.body)};
  auto all_at_once = [](const beast::error_code& ec, std::size_t) -> std::size_t {
    return ec ? 0 : std::numeric_limits<std::size_t>::max();
  };
  net::async_write(stream, parts, all_at_once, std::move(done));
}
template <class Stream, class Message, class Handler>
void send_answer(Stream& stream, Message& m, Handler done) {
  bhttp::async_write(stream, m, std::move(done));
}

/// Pipelined requests wait in the read buffer and are answered in order. A request with a body
/// is admitted on its header (route, token, scope, rate limit) before any of the body is read.
class session : public std::enable_shared_from_this<session> {
public:
  session(tcp::socket&& socket, std::shared_ptr<listener_context> ctx)
    : stream_(std::move(socket)), ctx_(std::move(ctx)), slot_(*ctx_) {
    buffer_.reserve(4096);
    // At the cap the connection waiting longest (for a header, in sending a body) gives its slot;
    // only when every one is serving is the new one answered 503, a bounded number at once.
    if (slot_.take()) return;
    overloaded_ = true;
    if (++ctx_->refusing > ctx_->max_refusing) turned_away_ = true;
  }

  ~session() {
    {
      std::lock_guard<std::mutex> guard{ctx_->sessions_mutex};
      ctx_->sessions.erase(this);
    }
    slot_.release();
    if (overloaded_) --ctx_->refusing;
    if (ctx_->connections == 0 && ctx_->refusing == 0 && ctx_->draining && ctx_->on_drained) ctx_->on_drained();
  }

  void start() {
    if (turned_away_) return close();  // over the cap and over the refusals in progress
    {
      std::lock_guard<std::mutex> guard{ctx_->sessions_mutex};
      ctx_->sessions.emplace(this, weak_from_this());
    }
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_next(); });
  }

  /// Finish the request in flight (if any), then close. Runs on the session's executor.
  void drain() {
    draining_ = true;
    if (!busy_) close();
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  auto executor() { return stream_.get_executor(); }
  const header_wait& waiting_for_header() const { return header_wait_; }

  /// On the session's executor, when the sweep found its wait for a header over: closed, unless
  /// a header came since.
  void time_out() { if (header_wait_.overdue(steady_ns())) close(); }

  /// Closes after the peer has had the chance to read our answer: stop sending, discard what it
  /// still sends (e.g. an oversized body) for a moment, then close. Closing with unread input
  /// would reset the connection and could destroy the answer in flight.
  void linger_close() {
    set_evictable(evictable::waiting);
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return close();
    stream_.expires_after(std::chrono::seconds{2});
    drain_discard();
  }

private:
  void drain_discard() {
    discard_.resize(16384);
    stream_.async_read_some(net::buffer(discard_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->drain_discard();
    });
  }

  void set_evictable(evictable e, std::int64_t since_ns = 0) { slot_.mark(e, since_ns); }

  /// The last write of an answer starts now: the wait for the next request counts from here (the
  /// client may read the answer before this write's completion runs on a busy I/O thread).
  void answer_ends_now(bool keep) {
    answered_ns_ = steady_ns();
    // Its client may already read the answer and wait: at the cap it may give way, after the write.
    if (keep && buffer_.size() == 0) set_evictable(evictable::finishing, answered_ns_);  // none pipelined
  }

  /// Makes room at the cap (evict_one): closed now, or once the answer being written is out.
  void evict() {
    if (slot_.is(evictable::finishing)) {
      evicted_ = true;
      return;
    }
    close();
  }

  void read_next() {
    if (draining_ || ctx_->draining) return close();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(ctx_->header_limit));
    parser_->body_limit(ctx_->body_limit);
    // A new connection gets header_timeout for its first request; keep-alive ones idle_timeout;
    // one over the cap, which is only answered 503, at most 2 s.
    auto bound = first_request_ ? ctx_->header_timeout : ctx_->idle_timeout;
    if (overloaded_) bound = std::min<std::chrono::seconds>(bound, std::chrono::seconds{2});
    stream_.expires_never();  // no timer of the stream for the wait: the sweep keeps its bound
    header_wait_.start(bound);
    // A pipelined request already in the buffer is being served, not waited for.
    set_evictable(buffer_.size() > 0 ? evictable::never : evictable::waiting, answered_ns_);
    bhttp::async_read_header(stream_.socket(), buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    header_wait_.end();
    set_evictable(evictable::never);
    if (ec) return on_read_error(ec);
    first_request_ = false;
    auto read = read_header(parser_->get());
    pending_ = std::move(read.request);
    request_id_ = pending_.request_id;
    method_ = pending_.method;
    host_ = pending_.host;
    // HEAD is the GET without its body (RFC 9110 9.3.2): routed, authorised and answered as GET.
    head_ = pending_.method == "HEAD";
    if (head_) pending_.method = "GET";
    if (auto problem = header_problem(read, parser_->get().version())) return refuse_request(std::move(*problem));
    if (parser_->is_done()) return on_read({});  // no body
    if (overloaded_ || ctx_->draining) return refuse_request(unavailable());
    // A body that arrived whole with its header (in the same read from the socket) costs nothing
    // more to take: the request is then checked as a whole, as one without a body is.
    if (whole_body_buffered()) {
      beast::error_code ec;
      buffer_.consume(parser_->put(buffer_.data(), ec));
      if (!ec && !parser_->is_done()) ec = bhttp::error::partial_message;
      return on_read(ec);
    }
    // Any other body is read only for a request its header admits: no more of an unauthenticated
    // body is read from the socket.
    ctx_->handler->admit(pending_, [self = shared_from_this()](std::optional<domain::api_reply> refusal,
                                                               std::shared_ptr<const admission> ticket) {
      auto exec = self->executor();
      net::post(exec, [self, refusal = std::move(refusal), ticket = std::move(ticket)]() mutable {
        self->on_admitted(std::move(refusal), std::move(ticket));
      });
    });
  }

  /// Whether the body, of a known length, is already in the buffer after its header.
  bool whole_body_buffered() const {
    if (parser_->chunked()) return false;
    auto length = parser_->content_length();
    return length && *length <= buffer_.size();
  }

  void on_admitted(std::optional<domain::api_reply> refusal, std::shared_ptr<const admission> ticket) {
    if (refusal) return refuse_request(std::move(*refusal));
    ticket_ = std::move(ticket);
    // Clients that sent `Expect: 100-continue` wait for this before they send the body.
    if (beast::iequals(parser_->get()[bhttp::field::expect], "100-continue")) {
      auto interim = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, 11);
      return bhttp::async_write(stream_, *interim, [self = shared_from_this(), interim](beast::error_code ec, std::size_t) {
        if (ec) return self->close();
        self->read_body();
      });
    }
    read_body();
  }

  /// Reads the body a piece at a time: it must keep arriving (`min_body_bytes_per_second` after
  /// `body_grace`) and be complete within `read_timeout`, else the connection is closed.
  void read_body() {
    body_started_ = std::chrono::steady_clock::now();
    body_bytes_ = 0;
    set_evictable(evictable::sending);
    read_body_some();
  }

  void read_body_some() {
    if (parser_->is_done()) return on_read({});
    auto deadline = body_started_ + ctx_->read_timeout;
    if (ctx_->min_body_bytes_per_second > 0) {
      auto earned = body_started_ + ctx_->body_grace
                    + std::chrono::milliseconds{body_bytes_ * 1000 / ctx_->min_body_bytes_per_second};
      deadline = std::min(deadline, earned);
    }
    stream_.expires_at(deadline);
    bhttp::async_read_some(stream_, buffer_, *parser_,
                           [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                             if (ec) return self->on_read(ec);
                             self->body_bytes_ += n;
                             self->read_body_some();
                           });
  }

  domain::api_reply unavailable() const { return unavailable_reply(overloaded_); }

  void on_read_error(beast::error_code ec) {
    if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted
        || ec.category() != bhttp::make_error_code(bhttp::error::end_of_stream).category())
      return close();
    // A protocol error: answer in the error shape, then close (the stream is out of sync).
    method_ = "-";
    refuse_request(protocol_error_reply(ec, *ctx_));
  }

  /// Answers `r` to a request that is not read further, then closes: the stream may hold an
  /// unread body (or be out of sync).
  void refuse_request(domain::api_reply r) {
    set_evictable(evictable::never);
    if (request_id_.empty()) request_id_ = domain::new_request_id();
    if (parser_ && method_.empty()) method_ = std::string{parser_->get().method_string()};
    keep_alive_ = false;
    started_ = std::chrono::steady_clock::now();
    busy_ = true;
    respond(std::move(r), 11);
  }

  void on_read(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    set_evictable(evictable::never);
    stream_.expires_never();
    auto req = parser_->release();
    started_ = std::chrono::steady_clock::now();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    busy_ = true;
    auto api = std::move(pending_);
    api.body = std::move(req.body());
    if (overloaded_ || ctx_->draining) {
      keep_alive_ = false;
      return respond(unavailable(), version_);
    }
    peer_gone_ = std::make_shared<std::atomic<bool>>(false);
    api.peer_gone = peer_gone_;
    // The callback holds the session: nothing else does while the request is in flight, and the
    // coordinator always answers (late callees become 503), so this never pins a connection forever.
    // An answer given before `handle` returns (a read answered from the caches) is written at once.
    std::optional<domain::api_reply> at_once;
    ++served_;  // a watch of an earlier request no longer applies
    answering_now = this;
    ctx_->handler->handle(std::move(api), std::move(ticket_),
                          [self = shared_from_this(), version = version_, &at_once](domain::api_reply r) {
                            if (answering_now == self.get()) return void(at_once = std::move(r));
                            // Called from any thread: hop to this connection's executor before touching it.
                            auto exec = self->executor();
                            net::post(exec, [self, r = std::move(r), version]() mutable { self->respond(std::move(r), version); });
                          });
    answering_now = nullptr;
    if (at_once) return respond(std::move(*at_once), version_);
    watch_peer(served_);
  }

  /// The session whose `handle` runs on this thread now: its callback, called before `handle`
  /// returns, answers in place.
  static thread_local session* answering_now;

  /// While request `served` is in flight (answered, or streamed), notices at once when the client
  /// closes its connection: its slot is given back and `peer_gone_` tells a held request (an event
  /// stream, a long poll) to end, instead of the next write finding out. A pipelined request that
  /// arrives meanwhile stays in the socket for the next read.
  void watch_peer(std::uint64_t served) {
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), served](beast::error_code ec) {
      if (ec == net::error::operation_aborted || !self->busy_ || served != self->served_) return;
      auto& socket = self->stream_.socket();
      char byte = 0;
      beast::error_code peek;
      std::size_t n = 0;
      if (!ec) {
        socket.non_blocking(true, peek);
        if (!peek) n = socket.receive(net::buffer(&byte, 1), tcp::socket::message_peek, peek);
      }
      if (!ec && peek == net::error::would_block) return self->watch_peer(served);  // not readable after all
      if (!ec && !peek && n > 0) return;  // the next request, pipelined: read once this one is answered
      self->peer_gone_->store(true);
      self->slot_.release();
      self->close();
    });
  }

  void respond(domain::api_reply r, unsigned version) {
    int status = domain::status_of(r);
    bool keep = keep_alive_ && !draining_ && !ctx_->draining;
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const std::string route = r.route.empty() ? "unmatched" : r.route;
    if (ctx_->stats) ctx_->stats->observe_request(route, method_, status, seconds);
    if (ctx_->access_log) {
      domain::access_entry e;
      e.request_id = request_id_;
      e.method = method_;
      e.route = route;
      e.status = status;
      e.seconds = seconds;
      log_access(*ctx_, std::move(e), r);
    }
    if (status == 401) answers::add_challenge(r, ctx_->recent_sign_in_seconds, ctx_->metadata.get(), host_);
    answers::framing f{version, keep, request_id_};
    if ((r.next_chunk || r.next_chunk_async) && !r.error) return respond_streaming(std::move(r), f);
    if (head_) return write_answer(answers::head(r, status, f), keep);
    if (auto bytes = answers::whole_bytes(r, status, f))
      return write_answer(std::make_shared<answers::answer_bytes>(std::move(*bytes)), keep);
    write_answer(answers::whole(r, status, f), keep);
  }

  /// Writes a whole answer (or a HEAD's), then reads the next request or closes.
  template <class Answer>
  void write_answer(std::shared_ptr<Answer> res, bool keep) {
    answer_ends_now(keep);
    send_answer(stream_.socket(), *res, [self = shared_from_this(), res, keep](beast::error_code ec, std::size_t) {
      self->after_response(ec, keep);
    });
  }

  void after_response(beast::error_code ec, bool keep) {
    busy_ = false;
    head_ = false;
    method_.clear();
    request_id_.clear();
    if (ec) return close();
    if (!keep) return linger_close();
    if (evicted_) return close();  // its slot went to a new connection while this answer was written
    read_next();
  }

  /// Header first, then one HTTP chunk per `next_chunk()`, then the last chunk: the body is never
  /// held whole in memory.
  void respond_streaming(domain::api_reply r, const answers::framing& f) {
    bool keep = f.keep_alive;
    auto header = answers::stream_header(r, f);
    auto serializer = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*header);
    auto next = std::make_shared<chunk_source>(chunk_source{std::move(r.next_chunk), std::move(r.next_chunk_async)});
    bool head = head_;
    if (head) answer_ends_now(keep);  // the header is all of it
    bhttp::async_write_header(stream_, *serializer,
                              [self = shared_from_this(), header, serializer, next, keep, head](beast::error_code ec,
                                                                                                  std::size_t) {
                                if (ec) return self->close();
                                if (head) return self->after_response(ec, keep);  // HEAD: no body, not even chunks
                                self->write_chunks(next, keep);
                              });
  }

  void write_chunks(std::shared_ptr<chunk_source> next, bool keep) {
    if (next->later) {
      // The chunk comes back on whatever thread has it: written from this connection's executor.
      return next->later([self = shared_from_this(), next, keep](std::optional<std::string> chunk) {
        net::post(self->executor(), [self, next, keep, chunk = std::move(chunk)]() mutable {
          self->write_chunk(std::move(chunk), next, keep);
        });
      });
    }
    auto chunk = next->now();
    while (chunk && chunk->empty()) chunk = next->now();  // an empty chunk would end the body
    write_chunk(std::move(chunk), std::move(next), keep);
  }

  void write_chunk(std::optional<std::string> chunk, std::shared_ptr<chunk_source> next, bool keep) {
    if (chunk && chunk->empty()) return write_chunks(std::move(next), keep);  // an empty chunk would end the body
    if (!chunk) {
      answer_ends_now(keep);
      return net::async_write(stream_, bhttp::make_chunk_last(),
                              [self = shared_from_this(), keep](beast::error_code ec, std::size_t) {
                                self->after_response(ec, keep);
                              });
    }
    auto data = std::make_shared<std::string>(std::move(*chunk));
    net::async_write(stream_, bhttp::make_chunk(net::buffer(*data)),
                     [self = shared_from_this(), data, next, keep](beast::error_code ec, std::size_t) {
                       if (ec) return self->close();
                       self->write_chunks(next, keep);
                     });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::shared_ptr<listener_context> ctx_;
  domain::api_request pending_;                ///< the request whose header was read
  std::shared_ptr<const admission> ticket_;    ///< what admitting its header earned
  std::chrono::steady_clock::time_point body_started_;
  std::size_t body_bytes_ = 0;
  bool overloaded_ = false;   ///< over the cap: every request is answered 503, then closed
  bool turned_away_ = false;  ///< over the cap and over `max_refusing`: closed at start
  bool busy_ = false;
  bool head_ = false;           ///< the request in flight is a HEAD
  bool first_request_ = true;   ///< no request header has arrived yet: header_timeout applies
  connection_slot slot_;  ///< read by other connections' accepts (eviction at the cap)
  /// When the last answer's last write began; before the first request, when the connection was
  /// accepted (its wait for a header counts from there, not from when its loop first ran it).
  std::int64_t answered_ns_ = steady_ns();
  bool evicted_ = false;          ///< evict() came while the answer was written: close after it

  friend bool evict_one(listener_context& ctx);
  bool draining_ = false;
  bool keep_alive_ = true;
  unsigned version_ = 11;
  std::string request_id_;
  std::string method_;
  std::string host_;  ///< the request's Host (a 401's resource metadata URL when none is configured)
  std::vector<char> discard_;
  std::chrono::steady_clock::time_point started_;
  std::uint64_t served_ = 0;  ///< requests handed to the handler (the peer watch's generation)
  header_wait header_wait_;
  std::shared_ptr<std::atomic<bool>> peer_gone_;  ///< the request in flight's: its client closed
};

thread_local session* session::answering_now = nullptr;

/// The sessions of `ctx` alive now. Taken under the mutex and used after it: the last reference to
/// a session may be the one taken here (another I/O thread let go of its own meanwhile), and its
/// destructor takes the mutex.
std::vector<std::shared_ptr<session>> live_sessions(listener_context& ctx) {
  std::vector<std::shared_ptr<session>> out;
  std::lock_guard<std::mutex> guard{ctx.sessions_mutex};
  out.reserve(ctx.sessions.size());
  for (auto& [raw, weak] : ctx.sessions)
    if (auto s = weak.lock()) out.push_back(std::move(s));
  return out;
}

/// Makes room for a new connection of `ctx` at the cap: closes the connection that has waited
/// longest, for a request header (or closing) or in sending a body; never one whose request is
/// being admitted or served. Its slot is released now, so the count never exceeds the cap. False
/// when there is none.
bool evict_one(listener_context& ctx) {
  // Sessions locked during the scan are released only after the mutex is: the last reference to
  // one may go here, and its destructor takes the mutex.
  std::vector<std::shared_ptr<session>> seen;
  std::shared_ptr<session> victim;
  {
    std::lock_guard<std::mutex> guard{ctx.sessions_mutex};
    seen.reserve(ctx.sessions.size());
    std::int64_t oldest = 0;
    for (auto& [raw, weak] : ctx.sessions) {
      auto s = weak.lock();
      if (!s) continue;
      seen.push_back(s);
      if (!s->slot_.held() || s->slot_.is(evictable::never)) continue;
      auto since = s->slot_.since_ns();
      if (!victim || since < oldest) {
        victim = s;
        oldest = since;
      }
    }
    // Its slot released under the lock, so two new connections never take the same one.
    if (victim) victim->slot_.release();
  }
  if (!victim) return false;
  net::post(victim->executor(), [victim] { victim->evict(); });
  return true;
}

listener::listener(net::io_context& ioc, const std::string& host, std::uint16_t port,
                   std::shared_ptr<listener_context> ctx, std::vector<net::io_context*> loops)
  : ioc_(ioc),
    loops_(std::move(loops)),
    acceptor_(net::make_strand(ioc)),
    sweep_(acceptor_.get_executor()),
    ctx_(std::move(ctx)) {
  beast::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec) throw std::runtime_error(ctx_->name + " listener: \"" + host + "\" is not an IP address");
  tcp::endpoint ep{address, port};
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error(ctx_->name + " listener: cannot listen on " + host + ":" + std::to_string(port) + ": "
                             + ec.message());
  port_ = acceptor_.local_endpoint().port();
}

/// How often the sweep looks for sessions whose wait for a header is over: a timeout closes
/// its connection up to this much after its bound.
constexpr std::chrono::milliseconds header_sweep{250};

void listener::run() {
  accept();
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->sweep(); });
}

void listener::sweep() {
  sweep_.expires_after(header_sweep);
  sweep_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || !self->acceptor_.is_open()) return;  // drained: every session closes on its own
    auto now = steady_ns();
    for (auto& s : live_sessions(*self->ctx_))
      if (s->waiting_for_header().overdue(now)) net::post(s->executor(), [s] { s->time_out(); });
    self->sweep();
  });
}

void listener::accept() {
  net::any_io_executor on = loops_.empty() ? net::any_io_executor{net::make_strand(ioc_)}
                                           : net::any_io_executor{loops_[next_loop_++ % loops_.size()]->get_executor()};
  acceptor_.async_accept(on, [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
    if (!ec) std::make_shared<session>(std::move(socket), self->ctx_)->start();
    self->accept();
  });
}

void listener::drain() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
    self->sweep_.cancel();
  });
  for (auto& s : live_sessions(*ctx_)) net::post(s->executor(), [s] { s->drain(); });
}

void listener::force_close() {
  for (auto& s : live_sessions(*ctx_)) net::post(s->executor(), [s] { s->close(); });
}

}  // namespace cl::http
