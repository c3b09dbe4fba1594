// The embedded S3 listener (docs/architecture.md, "Blobs"): accepts connections up to its cap,
// each an `s3_session` on a strand of its own (http/s3_session.hpp says how a request's jobs are
// split: header -> s3::split_target -> s3::classify -> sigv4::verify -> bucket check -> the
// operation, an upload or a download).
//
// Sizes and framing: declared sizes are enforced by the embedded store as bodies arrive
// (`X-Cl-Length`, signed); with `blobs.backend = s3` at completion (400 `SIZE_MISMATCH`).
// `aws-chunked` bodies are refused with 501 rather than stored with their framing.

#include "http/s3_server.hpp"

#include "http/s3_session.hpp"

#include <boost/asio/strand.hpp>

#include <algorithm>

namespace cl::http {

using s3_listener::tcp;
namespace beast = boost::beast;
namespace net = boost::asio;

void s3_server::impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // stopped
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::shared_ptr<s3_listener::s3_session> session;
    {
      std::lock_guard<std::mutex> guard{self->sessions_mutex};
      auto& all = self->sessions;
      all.erase(std::remove_if(all.begin(), all.end(), [](const auto& w) { return w.expired(); }), all.end());
      // Past the cap a new connection is closed at once: file descriptors stay bounded.
      if (static_cast<int>(all.size()) < self->cfg.max_connections) {
        session = std::make_shared<s3_listener::s3_session>(std::move(socket), self);
        all.push_back(session);
      }
    }
    if (session) session->start();
    else socket.close(ignored);
    self->accept();
  });
}

s3_server::s3_server(net::io_context& ioc, s3_server_config cfg) : impl_(std::make_shared<impl>(ioc, std::move(cfg))) {}

s3_server::~s3_server() {
  stop();
  impl_->disk.join();
  impl_->writes.join();
  impl_->hashing.join();
  impl_->reads.join();
}

void s3_server::run() {
  impl_->accept();
}

std::uint16_t s3_server::port() const {
  return impl_->acceptor.local_endpoint().port();
}

void s3_server::stop() {
  net::post(impl_->acceptor.get_executor(), [impl = impl_] {
    beast::error_code ec;
    impl->acceptor.close(ec);
  });
  std::lock_guard<std::mutex> guard{impl_->sessions_mutex};
  for (auto& w : impl_->sessions)
    if (auto s = w.lock()) s->close_soon();
  impl_->sessions.clear();
}

}  // namespace cl::http
