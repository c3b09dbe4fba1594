#pragma once
/// One asynchronous step of the service's blocking HTTP clients (the JWKS fetch, webhook
/// deliveries): each runs its own io_context on the calling thread, one operation at a time, under
/// one deadline for the whole exchange. HTTP-layer private (it brings Asio).

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

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
