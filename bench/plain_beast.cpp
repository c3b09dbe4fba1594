// Reference server for bench/run: a tight async Beast server that answers fixed bytes.
// GET /v0/openapi.json -> 200 with the file given as argv[3]; anything else -> 404 with argv[4].
// Usage: plain_beast PORT THREADS OPENAPI_FILE NOT_FOUND_FILE

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

std::string slurp(const char* path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

std::string openapi_body, not_found_body;

class session : public std::enable_shared_from_this<session> {
public:
  explicit session(tcp::socket s) : stream_(std::move(s)) {}
  void run() { read(); }

private:
  void read() {
    req_ = {};
    http::async_read(stream_, buffer_, req_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return;
      self->respond();
    });
  }
  void respond() {
    bool openapi = req_.target() == "/v0/openapi.json";
    res_ = http::response<http::string_body>{openapi ? http::status::ok : http::status::not_found, req_.version()};
    res_.set(http::field::content_type, "application/json");
    res_.set("X-Request-Id", "req_0123456789abcdef");
    res_.body() = openapi ? openapi_body : not_found_body;
    res_.keep_alive(req_.keep_alive());
    res_.prepare_payload();
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec || !self->res_.keep_alive()) return;
      self->read();
    });
  }
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
};

void accept(tcp::acceptor& acceptor, net::io_context& ioc) {
  acceptor.async_accept(net::make_strand(ioc), [&](beast::error_code ec, tcp::socket s) {
    if (!ec) std::make_shared<session>(std::move(s))->run();
    accept(acceptor, ioc);
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: plain_beast PORT THREADS OPENAPI_FILE NOT_FOUND_FILE\n";
    return 2;
  }
  openapi_body = slurp(argv[3]);
  not_found_body = slurp(argv[4]);
  int threads = std::stoi(argv[2]);
  net::io_context ioc{threads};
  tcp::acceptor acceptor{ioc, {net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::stoi(argv[1]))}};
  accept(acceptor, ioc);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { ioc.run(); });
  ioc.run();
}
