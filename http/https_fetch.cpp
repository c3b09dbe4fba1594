#include "http/https_fetch.hpp"

#include "http/client_step.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <stdexcept>

namespace cl::http {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

std::string fetch_https(const std::string& url, const std::string& extra_ca_file,
                        std::chrono::milliseconds timeout, std::size_t max_bytes) {
  const std::string scheme = "https://";
  if (url.rfind(scheme, 0) != 0) throw std::runtime_error("JWKS URL is not https");
  auto rest = url.substr(scheme.size());
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string target = slash == std::string::npos ? "/" : rest.substr(slash);
  std::string host = authority, port = "443";
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) throw std::runtime_error("JWKS URL has a malformed host");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') port = authority.substr(close + 2);
  } else if (auto colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  const std::string where = "JWKS fetch from " + host;

  net::io_context ioc;
  ssl::context ctx{ssl::context::tls_client};
  ctx.set_default_verify_paths();
  if (!extra_ca_file.empty()) ctx.load_verify_file(extra_ca_file);
  ctx.set_verify_mode(ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream{ioc, ctx};
  if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()))
    throw std::runtime_error(where + ": cannot set SNI");
  stream.set_verify_callback(ssl::host_name_verification(host));

  auto deadline = std::chrono::steady_clock::now() + timeout;
  // Runs one asynchronous step to completion or the overall deadline.
  auto step = [&](const char* what, auto&& initiate) {
    auto result = run_step(ioc, deadline, initiate, [&] { beast::get_lowest_layer(stream).close(); });
    if (result == net::error::timed_out) throw std::runtime_error(where + ": timed out during " + what);
    if (result && !(result == ssl::error::stream_truncated))
      throw std::runtime_error(where + ": " + what + " failed: " + result.message());
  };

  tcp::resolver resolver{ioc};
  tcp::resolver::results_type endpoints;
  note_resolving("jwks", host);
  step("resolve", [&](auto handler) {
    resolver.async_resolve(host, port, [&endpoints, handler](boost::system::error_code ec, tcp::resolver::results_type r) mutable {
      endpoints = std::move(r);
      handler(ec);
    });
  });
  note_outbound("jwks", endpoints);
  step("connect", [&](auto handler) {
    beast::get_lowest_layer(stream).async_connect(endpoints, [handler](boost::system::error_code ec, auto&&) mutable { handler(ec); });
  });
  step("TLS handshake", [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); });
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, host);
  req.set(http::field::user_agent, "contentlake-jwks");
  req.set(http::field::accept, "application/json");
  step("request", [&](auto handler) { http::async_write(stream, req, handler); });
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_bytes);
  step("response", [&](auto handler) { http::async_read(stream, buffer, parser, handler); });
  auto res = parser.release();
  if (res.result() != http::status::ok)
    throw std::runtime_error(where + ": HTTP status " + std::to_string(res.result_int()));
  boost::system::error_code ignored;
  beast::get_lowest_layer(stream).close();
  return std::move(res.body());
}

}  // namespace cl::http
