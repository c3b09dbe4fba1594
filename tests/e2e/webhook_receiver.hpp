#pragma once
// A webhook receiver on 127.0.0.1 for end-to-end tests: answers every POST 204 and records each
// delivery's `webhook-id` and body. One thread per connection; all stop with the object.

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cl::testing {

class webhook_receiver {
public:
  struct delivery {
    std::string id;    ///< the `webhook-id` header
    std::string body;
    std::string target;  ///< the request's path
  };

  webhook_receiver() : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    accepting_ = std::thread([this] { accept(); });
  }

  ~webhook_receiver() {
    stopping_ = true;
    boost::system::error_code ec;
    {
      // Unblocks `accept`: a connection of our own.
      boost::asio::io_context io;
      boost::asio::ip::tcp::socket poke{io};
      poke.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
    }
    accepting_.join();
    {
      std::lock_guard lock{mutex_};
      for (auto& s : sockets_) s.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    }
    for (auto& t : serving_) t.join();
  }

  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  std::vector<delivery> deliveries() const {
    std::lock_guard lock{mutex_};
    return received_;
  }

private:
  void accept() {
    for (;;) {
      boost::asio::ip::tcp::socket s{ioc_};
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (stopping_ || ec) return;
      std::lock_guard lock{mutex_};
      sockets_.push_back(std::move(s));
      serving_.emplace_back([this, sock = &sockets_.back()] { serve(*sock); });
    }
  }

  void serve(boost::asio::ip::tcp::socket& s) {
    namespace http = boost::beast::http;
    boost::beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      boost::system::error_code ec;
      http::read(s, buffer, req, ec);
      if (ec) return;
      {
        std::lock_guard lock{mutex_};
        received_.push_back({std::string{req["webhook-id"]}, req.body(), std::string{req.target()}});
      }
      http::response<http::empty_body> res{http::status::no_content, req.version()};
      res.keep_alive(req.keep_alive());
      http::write(s, res, ec);
      if (ec || !req.keep_alive()) return;
    }
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::list<boost::asio::ip::tcp::socket> sockets_;
  std::vector<std::thread> serving_;
  std::vector<delivery> received_;
  std::thread accepting_;
};

}  // namespace cl::testing
