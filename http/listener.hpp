#pragma once
/// Beast listener and sessions (internal to http/). Each connection runs on one executor (an event
/// loop of one thread, or a strand); other threads reach a session only through net::post on it.

#include "actors/metrics.hpp"
#include "http/handler.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace cl::http {

class resource_metadata;
class session;

/// Shared by a listener and all its sessions; outlives them (held by shared_ptr).
struct listener_context {
  std::string name;  ///< "public" or "admin", in logs
  std::size_t body_limit = 10 * 1024 * 1024;
  std::size_t header_limit = 16 * 1024;
  std::chrono::seconds idle_timeout{60};
  std::chrono::seconds read_timeout{30};   ///< a whole request body, at most
  /// A body must keep arriving: by `body_grace` plus one second per this many bytes received
  /// since it started (0: only `read_timeout` bounds it).
  std::size_t min_body_bytes_per_second = 1024;
  std::chrono::seconds body_grace{2};
  int max_connections = 1024;
  /// Connections over the cap (every connection is serving a request) that are still answered
  /// 503 SERVER_OVERLOADED; beyond this many at once a new one is closed at accept.
  int max_refusing = 64;
  std::chrono::seconds header_timeout{10};    ///< a new connection's first request header
  std::int64_t recent_sign_in_seconds = 900;  ///< the `max_age` of an AUTH_STALE challenge
  bool access_log = true;
  request_handler* handler = nullptr;
  /// The protected resource metadata every 401's `WWW-Authenticate` names; null: none.
  std::shared_ptr<const resource_metadata> metadata;
  actors::metrics* stats = nullptr;  ///< request metrics; nullptr: not counted

  std::atomic<int> connections{0};  ///< holding a slot: at most `max_connections`
  std::atomic<int> refusing{0};     ///< over the cap, being answered 503: at most `max_refusing`
  std::atomic<bool> draining{false};
  std::function<void()> on_drained;  ///< called (any thread) when draining and the last session ends

  std::mutex sessions_mutex;
  std::unordered_map<const session*, std::weak_ptr<session>> sessions;
};

/// Accepts connections and starts a session for each.
class listener : public std::enable_shared_from_this<listener> {
public:
  /// Binds `host:port`; throws std::runtime_error naming the address when it cannot. Accepts on
  /// `ioc`; each connection is served on a strand of `ioc` or, when `loops` are given (event
  /// loops run by one thread each), on the next of them in turn: its reads, its plan when run in
  /// place and its writes on that one thread, with no lock between them.
  listener(boost::asio::io_context& ioc, const std::string& host, std::uint16_t port,
           std::shared_ptr<listener_context> ctx, std::vector<boost::asio::io_context*> loops = {});

  void run();

  /// The bound port.
  std::uint16_t port() const { return port_; }

  /// Stops accepting and asks every session to finish its request in flight and close.
  void drain();

  /// Closes every session now (end of the shutdown grace period).
  void force_close();

private:
  void accept();
  /// Every `header_sweep`, closes the sessions whose wait for a request header is over
  /// (`http.header_timeout_seconds`, `http.idle_timeout_seconds`): one timer for all of them, not
  /// one armed and cancelled on every request.
  void sweep();

  boost::asio::io_context& ioc_;
  std::vector<boost::asio::io_context*> loops_;
  std::size_t next_loop_ = 0;  ///< the loop the next connection goes to (read on the acceptor's strand)
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer sweep_;  ///< on the acceptor's strand
  std::shared_ptr<listener_context> ctx_;
  std::uint16_t port_ = 0;
};

}  // namespace cl::http
