// Reference server for bench/run: a tight async Beast server answering preloaded bytes.
// GET <path> -> 200 with the file ROOT/<path>; any If-None-Match -> 304; unknown path -> 404.
// Usage: plain_beast PORT THREADS ROOT [caf]
// With `caf`, every request is answered the way the service answers one, minus all its work: a
// CAF actor is spawned for it (the per-request coordinator) on a scheduler configured as the
// service's (2 threads, sharing policy), and the answer is posted back to the connection's I/O
// thread. What that costs is the floor of the design's request path on this machine.

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

std::map<std::string, std::string, std::less<>> files;
caf::actor_system* actors = nullptr;  // set in `caf` mode

class session : public std::enable_shared_from_this<session> {
public:
  explicit session(tcp::socket s) : stream_(std::move(s)) {}
  void run() { read(); }

private:
  void read() {
    req_ = {};
    http::async_read(stream_, buffer_, req_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return;
      if (!actors) return self->respond();
      actors->spawn([self](caf::event_based_actor*) -> caf::behavior {
        net::post(self->stream_.get_executor(), [self] { self->respond(); });
        return {};
      });
    });
  }
  void respond() {
    auto target = req_.target();
    auto it = files.find(std::string_view{target.data(), target.size()});
    bool conditional = !req_[http::field::if_none_match].empty();
    auto status = it == files.end() ? http::status::not_found : conditional ? http::status::not_modified : http::status::ok;
    res_ = http::response<http::string_body>{status, req_.version()};
    res_.set(http::field::content_type, "application/json");
    res_.set("X-Request-Id", "req_0123456789abcdef");
    if (status == http::status::ok) res_.body() = it->second;
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
  if (argc != 4 && !(argc == 5 && std::string_view{argv[4]} == "caf")) {
    std::cerr << "usage: plain_beast PORT THREADS ROOT [caf]\n";
    return 2;
  }
  std::filesystem::path root{argv[3]};
  for (const auto& entry : std::filesystem::recursive_directory_iterator{root})
    if (entry.is_regular_file()) {
      std::ifstream in{entry.path(), std::ios::binary};
      files["/" + std::filesystem::relative(entry.path(), root).string()] =
        std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    }
  caf::actor_system_config config;
  config.set("scheduler.max-threads", 2);
  config.set("scheduler.policy", caf::atom("sharing"));
  std::optional<caf::actor_system> system;
  if (argc == 5) actors = &system.emplace(config);
  int threads = std::stoi(argv[2]);
  net::io_context ioc{threads};
  tcp::acceptor acceptor{ioc, {net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::stoi(argv[1]))}};
  accept(acceptor, ioc);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { ioc.run(); });
  ioc.run();
}
