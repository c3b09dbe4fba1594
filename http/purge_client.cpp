#include "http/purge_client.hpp"

#include "http/client_step.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>

namespace cl::http {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;

}  // namespace

domain::purge_response send_purge(const domain::purge_request& r) {
  auto deadline = steady::now() + std::chrono::milliseconds{r.timeout_ms};
  domain::purge_response out;
  try {
    net::io_context ioc;
    note_resolving("purge", r.to.host);
    tcp::resolver resolver{ioc};
    tcp::resolver::results_type results;
    checked_step(
      ioc, deadline, "dns",
      [&](auto handler) {
        resolver.async_resolve(r.to.host, r.to.port,
                               [&results, handler](boost::system::error_code e, tcp::resolver::results_type found) mutable {
                                 results = std::move(found);
                                 handler(e);
                               });
      },
      [&] { resolver.cancel(); });
    beast::tcp_stream stream{ioc};
    note_outbound("purge", results);
    checked_step(ioc, deadline, "connect", [&](auto handler) { stream.async_connect(results, handler); },
         [&] { stream.close(); });
    bhttp::request<bhttp::empty_body> req{bhttp::verb::purge, r.to.target, 11};
    auto host = r.to.host.find(':') != std::string::npos ? "[" + r.to.host + "]" : r.to.host;
    req.set(bhttp::field::host, r.to.port == "80" ? host : host + ":" + r.to.port);
    req.set(bhttp::field::user_agent, "contentlake-purger");
    req.set("X-Purge-Secret", r.secret);
    if (!r.hard_keys.empty()) req.set("xkey-purge", r.hard_keys);
    if (!r.soft_keys.empty()) req.set("xkey-softpurge", r.soft_keys);
    if (r.everything) req.set("X-Purge-All", "1");
    req.set(bhttp::field::connection, "close");
    auto close = [&] { stream.close(); };
    checked_step(ioc, deadline, "send", [&](auto handler) { bhttp::async_write(stream, req, handler); }, close);
    beast::flat_buffer buffer{16 * 1024};
    bhttp::response_parser<bhttp::empty_body> parser;
    parser.header_limit(16 * 1024);
    checked_step(ioc, deadline, "response", [&](auto handler) { bhttp::async_read_header(stream, buffer, parser, handler); },
         close);
    close();
    out.status = static_cast<int>(parser.get().result_int());
    if (out.status != 200) out.error = "http_status";
  } catch (const client_failure& f) {
    out.error = f.what;
  } catch (const std::exception&) {
    out.error = "client";
  }
  return out;
}

}  // namespace cl::http
