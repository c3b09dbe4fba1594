#pragma once
/// One asynchronous step of the service's blocking HTTP clients (the JWKS fetch, webhook
/// deliveries): each runs its own io_context on the calling thread, one operation at a time, under
/// one deadline for the whole exchange. HTTP-layer private (it brings Asio).

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

namespace cl::http {

/// Starts an operation with `initiate(handler)` and runs `ioc` until it completes or `deadline`
/// passes. On the deadline `on_timeout()` closes what the operation waits on (it then completes,
/// cancelled) and the answer is `boost::asio::error::timed_out`; otherwise the operation's result.
template <class Initiate, class OnTimeout>
boost::system::error_code run_step(boost::asio::io_context& ioc, std::chrono::steady_clock::time_point deadline,
                                   Initiate initiate, OnTimeout on_timeout) {
  boost::system::error_code result = boost::asio::error::would_block;
  initiate([&result](boost::system::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run_until(deadline);
  if (result == boost::asio::error::would_block) {
    on_timeout();
    ioc.restart();
    ioc.run();
    return boost::asio::error::timed_out;
  }
  return result;
}

/// Logs (at debug) a name an outbound client is about to resolve (a lookup may leave the machine):
/// `what` (`webhook`, `purge`, `jwks`, `s3`) and the host name; never a URL, path or header.
inline void note_resolving(const char* what, const std::string& host) {
  spdlog::debug("outbound {}: resolving {}", what, host);
}

/// Logs (at debug) each address an outbound client is about to connect to: `what`, the address and
/// port. The test suite runs its services at debug and fails any run whose service resolved a name
/// but `localhost` or tried an address beyond loopback (tests/client/log_secrets.py).
template <class Endpoints>
void note_outbound(const char* what, const Endpoints& endpoints) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  for (const auto& e : endpoints) {
    boost::asio::ip::tcp::endpoint to = e;
    spdlog::debug("outbound {}: {} port {}", what, to.address().to_string(), to.port());
  }
}

/// A client exchange that failed at one step, with its error class (`dns`, `connect`, `send`,
/// `response`, `tls`, `timeout`...): what the clients report, never a URL, header or body.
struct client_failure {
  std::string what;
};

/// `run_step`, throwing `client_failure{what}` when the step fails (`timeout` when the deadline
/// passed).
template <class Initiate, class OnTimeout>
void checked_step(boost::asio::io_context& ioc, std::chrono::steady_clock::time_point deadline, const char* what,
                  Initiate initiate, OnTimeout on_timeout) {
  auto result = run_step(ioc, deadline, initiate, on_timeout);
  if (result == boost::asio::error::timed_out) throw client_failure{"timeout"};
  if (result) throw client_failure{what};
}

}  // namespace cl::http
