#include "http/webhook_client.hpp"

#include "http/client_step.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
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

template <class Stream>
domain::webhook_response exchange(net::io_context& ioc, steady::time_point deadline, Stream& stream,
                                  const domain::webhook_target& t, const domain::webhook_request& r,
                                  const webhook_client_options& o) {
  bhttp::request<bhttp::string_body> req{bhttp::verb::post, t.target, 11};
  bool default_port = (t.tls && t.port == "443") || (!t.tls && t.port == "80");
  auto host = t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host;
  req.set(bhttp::field::host, default_port ? host : host + ":" + t.port);
  req.set(bhttp::field::user_agent, o.user_agent);
  req.set(bhttp::field::content_type, "application/json");
  req.set("webhook-id", r.message_id);
  req.set("webhook-timestamp", std::to_string(r.timestamp));
  req.set("webhook-signature", r.signature);
  req.set(bhttp::field::connection, "close");
  req.body() = r.body;
  req.prepare_payload();
  auto close = [&] { beast::get_lowest_layer(stream).close(); };
  checked_step(ioc, deadline, "send", [&](auto handler) { bhttp::async_write(stream, req, handler); }, close);
  // Only the header is read: the status and Retry-After are all a delivery needs.
  beast::flat_buffer buffer{16 * 1024};
  bhttp::response_parser<bhttp::empty_body> parser;
  parser.header_limit(16 * 1024);
  checked_step(ioc, deadline, "response", [&](auto handler) { bhttp::async_read_header(stream, buffer, parser, handler); }, close);
  close();
  domain::webhook_response out;
  const auto& res = parser.get();
  out.status = static_cast<std::int32_t>(res.result_int());
  if (auto ra = res.find(bhttp::field::retry_after); ra != res.end())
    if (auto ms = domain::retry_after_ms(std::string{ra->value()}, static_cast<std::int64_t>(std::time(nullptr))))
      out.retry_after_ms = *ms;
  if (out.status >= 300 && out.status < 400) out.error = "redirect";
  else if (out.status < 200 || out.status >= 300) out.error = "http_status";
  return out;
}

}  // namespace

domain::webhook_response post_webhook(const domain::webhook_request& r, const webhook_client_options& o) {
  auto started = steady::now();
  auto deadline = started + std::chrono::milliseconds{r.timeout_ms};
  domain::webhook_response out;
  auto finish = [&] {
    out.latency_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count();
    return out;
  };
  auto parsed = domain::parse_webhook_url(r.url, o.https_only);
  if (std::holds_alternative<std::string>(parsed)) {
    out.error = "refused_url";
    return finish();
  }
  const auto& t = std::get<domain::webhook_target>(parsed);
  try {
    net::io_context ioc;
    auto endpoints = checked_endpoints(ioc, deadline, t, o);
    note_outbound("webhook", endpoints);
    tcp::socket socket{ioc};
    // The first checked address that accepts; never a name (it could answer differently now).
    boost::system::error_code last = net::error::host_unreachable;
    for (const auto& e : endpoints) {
      socket = tcp::socket{ioc};
      last = run_step(
        ioc, deadline, [&](auto handler) { socket.async_connect(e, handler); }, [&] { socket.close(); });
      if (last == net::error::timed_out) throw client_failure{"timeout"};
      if (!last) break;
    }
    if (last) throw client_failure{"connect"};
    if (!t.tls) {
      beast::tcp_stream stream{std::move(socket)};
      out = exchange(ioc, deadline, stream, t, r, o);
      return finish();
    }
    ssl::context ctx{ssl::context::tls_client};
    ctx.set_default_verify_paths();
    if (!o.ca_file.empty()) ctx.load_verify_file(o.ca_file);
    ctx.set_verify_mode(ssl::verify_peer);
    beast::ssl_stream<beast::tcp_stream> stream{beast::tcp_stream{std::move(socket)}, ctx};
    if (!SSL_set_tlsext_host_name(stream.native_handle(), t.host.c_str())) throw client_failure{"tls"};
    stream.set_verify_callback(ssl::host_name_verification(t.host));
    checked_step(ioc, deadline, "tls", [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); },
         [&] { beast::get_lowest_layer(stream).close(); });
    out = exchange(ioc, deadline, stream, t, r, o);
  } catch (const client_failure& f) {
    out.error = f.what;
  } catch (const std::exception&) {
    out.error = "client";
  }
  return finish();
}

}  // namespace cl::http
