#include "http/webhook_client.hpp"

#include "http/client_step.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <poll.h>

#include <algorithm>
#include <ctime>
#include <optional>

namespace cl::http {

namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;

/// An answer's body is read up to this to reuse its connection; a longer one closes it.
constexpr std::uint64_t body_kept_limit = 64 * 1024;

domain::ip_address to_domain(const net::ip::address& a) {
  domain::ip_address out{};
  if (a.is_v4()) {
    auto b = a.to_v4().to_bytes();
    out[10] = out[11] = 0xff;
    std::copy(b.begin(), b.end(), out.begin() + 12);
  } else {
    auto b = a.to_v6().to_bytes();
    std::copy(b.begin(), b.end(), out.begin());
  }
  return out;
}

/// The addresses of `host` the policy allows, in the resolver's order.
std::vector<tcp::endpoint> checked_endpoints(net::io_context& ioc, steady::time_point deadline,
                                             const domain::webhook_target& t, const webhook_client_options& o) {
  std::vector<tcp::endpoint> all;
  unsigned short port = static_cast<unsigned short>(std::stoi(t.port));
  // An address in any form the resolver reads as one is the address the creation check read.
  if (auto literal = domain::host_address(t.host)) {
    net::ip::address_v6::bytes_type bytes;
    std::copy(literal->begin(), literal->end(), bytes.begin());
    all.emplace_back(net::ip::make_address_v6(bytes), port);
  } else {
    note_resolving("webhook", t.host);
    tcp::resolver resolver{ioc};
    tcp::resolver::results_type results;
    checked_step(
      ioc, deadline, "dns",
      [&](auto handler) {
        resolver.async_resolve(t.host, t.port, [&results, handler](boost::system::error_code e, tcp::resolver::results_type r) mutable {
          results = std::move(r);
          handler(e);
        });
      },
      [&] { resolver.cancel(); });
    for (const auto& r : results) all.push_back(r.endpoint());
  }
  std::vector<tcp::endpoint> allowed;
  for (auto& e : all) {
    auto a = e.address();
    // An IPv4-mapped IPv6 answer is checked (and connected to) as the IPv4 address it is.
    if (a.is_v6() && a.to_v6().is_v4_mapped()) a = net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
    if (domain::address_allowed(to_domain(a), o.allowed_networks)) allowed.emplace_back(a, port);
  }
  if (allowed.empty()) throw client_failure{"refused_address"};
  return allowed;
}

std::string origin_of(const domain::webhook_target& t) {
  return (t.tls ? "https://" : "http://") + t.host + ":" + t.port;
}

/// A kept connection failed before any byte of its answer (the receiver had closed it): the
/// delivery goes again on a new connection.
struct stale_connection {};

}  // namespace

struct webhook_client::tls_context {
  ssl::context ctx{ssl::context::tls_client};
};

/// One connection to a checked address, with the io_context its operations run on (on the
/// calling thread, one exchange at a time).
struct webhook_client::connection {
  std::string origin;
  net::io_context ioc;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer{16 * 1024};
  steady::time_point resolved_at, idle_since;

  tcp::socket& socket() { return plain ? plain->socket() : beast::get_lowest_layer(*tls).socket(); }
  void close() {
    boost::system::error_code ignored;
    socket().close(ignored);
  }
  /// Whether a connection that waited unused can take a request: still open, nothing to read
  /// (an unused connection that became readable was closed by its peer, or holds stray bytes).
  bool quiet() {
    if (!socket().is_open() || buffer.size() > 0) return false;
    pollfd p{socket().native_handle(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }
};

webhook_client::webhook_client(webhook_client_options options)
    : options_(std::move(options)), tls_(std::make_unique<tls_context>()) {
  tls_->ctx.set_default_verify_paths();
  if (!options_.ca_file.empty()) tls_->ctx.load_verify_file(options_.ca_file);
  tls_->ctx.set_verify_mode(ssl::verify_peer);
}

webhook_client::~webhook_client() = default;

std::size_t webhook_client::connections_made() const {
  std::lock_guard lock{mutex_};
  return made_;
}

std::unique_ptr<webhook_client::connection> webhook_client::take(const std::string& origin) {
  auto now = steady::now();
  std::vector<std::unique_ptr<connection>> expired;  // closed outside the lock
  std::unique_ptr<connection> found;
  {
    std::lock_guard lock{mutex_};
    for (auto it = idle_.begin(); it != idle_.end();) {
      auto& c = **it;
      if (now - c.idle_since >= options_.idle || now - c.resolved_at >= options_.keep_alive) {
        expired.push_back(std::move(*it));
        it = idle_.erase(it);
      } else {
        ++it;
      }
    }
    // The one used last: the fewest connections stay warm.
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it)
      if ((*it)->origin == origin) {
        found = std::move(*it);
        idle_.erase(std::next(it).base());
        break;
      }
  }
  if (found && !found->quiet()) found.reset();
  return found;
}

void webhook_client::give_back(std::unique_ptr<connection> c) {
  c->idle_since = steady::now();
  std::unique_ptr<connection> dropped;
  std::lock_guard lock{mutex_};
  idle_.push_back(std::move(c));
  if (idle_.size() > options_.max_idle) {
    dropped = std::move(idle_.front());
    idle_.erase(idle_.begin());
  }
}

namespace {

/// Resolves, checks and connects (and shakes hands, for https): a new connection to `t`.
template <class Connection>
void open_connection(Connection& c, steady::time_point deadline, const domain::webhook_target& t,
                     const webhook_client_options& o, ssl::context& tls) {
  auto endpoints = checked_endpoints(c.ioc, deadline, t, o);
  c.resolved_at = steady::now();
  note_outbound("webhook", endpoints);
  tcp::socket socket{c.ioc};
  // The first checked address that accepts; never a name (it could answer differently now).
  boost::system::error_code last = net::error::host_unreachable;
  for (const auto& e : endpoints) {
    socket = tcp::socket{c.ioc};
    last = run_step(
      c.ioc, deadline, [&](auto handler) { socket.async_connect(e, handler); }, [&] { socket.close(); });
    if (last == net::error::timed_out) throw client_failure{"timeout"};
    if (!last) break;
  }
  if (last) throw client_failure{"connect"};
  socket.set_option(tcp::no_delay{true});
  if (!t.tls) {
    c.plain.emplace(std::move(socket));
    return;
  }
  c.tls.emplace(beast::tcp_stream{std::move(socket)}, tls);
  auto& stream = *c.tls;
  if (!SSL_set_tlsext_host_name(stream.native_handle(), t.host.c_str())) throw client_failure{"tls"};
  stream.set_verify_callback(ssl::host_name_verification(t.host));
  checked_step(c.ioc, deadline, "tls", [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); },
               [&] { c.close(); });
}

/// Sends `r` on `stream` and reads the answer; `*keep` says whether the connection can take another.
template <class Stream>
domain::webhook_response exchange(net::io_context& ioc, steady::time_point deadline, Stream& stream,
                                  beast::flat_buffer& buffer, bool reused, const domain::webhook_target& t,
                                  const domain::webhook_request& r, const webhook_client_options& o, bool* keep) {
  *keep = false;
  bhttp::request<bhttp::string_body> req{bhttp::verb::post, t.target, 11};
  bool default_port = (t.tls && t.port == "443") || (!t.tls && t.port == "80");
  auto host = t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host;
  req.set(bhttp::field::host, default_port ? host : host + ":" + t.port);
  req.set(bhttp::field::user_agent, o.user_agent);
  req.set(bhttp::field::content_type, "application/json");
  req.set("webhook-id", r.message_id);
  req.set("webhook-timestamp", std::to_string(r.timestamp));
  req.set("webhook-signature", r.signature);
  if (o.keep_alive.count() <= 0) req.set(bhttp::field::connection, "close");
  req.body() = r.body;
  req.prepare_payload();
  auto close = [&] { beast::get_lowest_layer(stream).close(); };
  auto sent = run_step(ioc, deadline, [&](auto handler) { bhttp::async_write(stream, req, handler); }, close);
  if (sent == net::error::timed_out) throw client_failure{"timeout"};
  if (sent) {
    if (reused) throw stale_connection{};
    throw client_failure{"send"};
  }
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(body_kept_limit);
  auto header = run_step(ioc, deadline, [&](auto handler) { bhttp::async_read_header(stream, buffer, parser, handler); }, close);
  if (header == net::error::timed_out) throw client_failure{"timeout"};
  if (header) {
    if (reused && !parser.got_some()) throw stale_connection{};
    throw client_failure{"response"};
  }
  domain::webhook_response out;
  const auto& res = parser.get();
  out.status = static_cast<std::int32_t>(res.result_int());
  if (auto ra = res.find(bhttp::field::retry_after); ra != res.end())
    if (auto ms = domain::retry_after_ms(std::string{ra->value()}, static_cast<std::int64_t>(std::time(nullptr))))
      out.retry_after_ms = *ms;
  if (out.status >= 300 && out.status < 400) out.error = "redirect";
  else if (out.status < 200 || out.status >= 300) out.error = "http_status";
  // The header decides the outcome; the body is read (and dropped) only to reuse the connection.
  if (o.keep_alive.count() <= 0 || !parser.keep_alive()) return out;
  if (!parser.is_done()) {
    auto rest = run_step(ioc, deadline, [&](auto handler) { bhttp::async_read(stream, buffer, parser, handler); }, close);
    if (rest) return out;
  }
  *keep = parser.keep_alive() && buffer.size() == 0;
  return out;
}

}  // namespace

domain::webhook_response webhook_client::post(const domain::webhook_request& r) {
  auto started = steady::now();
  auto deadline = started + std::chrono::milliseconds{r.timeout_ms};
  domain::webhook_response out;
  auto finish = [&] {
    out.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count();
    return out;
  };
  auto parsed = domain::parse_webhook_url(r.url, options_.https_only);
  if (std::holds_alternative<std::string>(parsed)) {
    out.error = "refused_url";
    return finish();
  }
  const auto& t = std::get<domain::webhook_target>(parsed);
  auto origin = origin_of(t);
  try {
    // A kept connection first; one that the receiver closed meanwhile is replaced once.
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto c = options_.keep_alive.count() > 0 && attempt == 0 ? take(origin) : nullptr;
      bool reused = c != nullptr;
      if (!c) {
        c = std::make_unique<connection>();
        c->origin = origin;
        {
          std::lock_guard lock{mutex_};
          ++made_;
        }
        open_connection(*c, deadline, t, options_, tls_->ctx);
      }
      bool keep = false;
      try {
        out = c->plain ? exchange(c->ioc, deadline, *c->plain, c->buffer, reused, t, r, options_, &keep)
                       : exchange(c->ioc, deadline, *c->tls, c->buffer, reused, t, r, options_, &keep);
      } catch (const stale_connection&) {
        continue;
      }
      if (keep && steady::now() - c->resolved_at < options_.keep_alive) give_back(std::move(c));
      return finish();
    }
    out.error = "response";
  } catch (const client_failure& f) {
    out.error = f.what;
  } catch (const std::exception&) {
    out.error = "client";
  }
  return finish();
}

}  // namespace cl::http
