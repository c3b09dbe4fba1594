#include "tests/support/jwks_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <stdexcept>

namespace cl::testing {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

struct self_signed {
  std::string cert_pem;
  std::string key_pem;
};

/// A self-signed certificate for 127.0.0.1 / localhost.
self_signed make_certificate() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  X509_add_ext(cert, san, -1);
  X509_EXTENSION_free(san);
  X509_EXTENSION* bc = X509V3_EXT_conf_nid(nullptr, &ctx, NID_basic_constraints, "critical,CA:TRUE");
  X509_add_ext(cert, bc, -1);
  X509_EXTENSION_free(bc);
  X509_sign(cert, key, EVP_sha256());
  auto to_string = [](BIO* bio) {
    char* data = nullptr;
    long len = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(len));
    BIO_free(bio);
    return out;
  };
  BIO* cb = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cb, cert);
  BIO* kb = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(kb, key, nullptr, nullptr, 0, nullptr, nullptr);
  self_signed out{to_string(cb), to_string(kb)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace

struct jwks_server::impl {
  net::io_context ioc;
  ssl::context tls{ssl::context::tls_server};
  tcp::acceptor acceptor{ioc};
  std::mutex mutex;
  std::string jwks;
  std::atomic<bool> stopping{false};
  std::thread thread;
};

jwks_server::jwks_server(std::string jwks, const std::string& ca_path) : impl_(std::make_unique<impl>()) {
  auto cert = make_certificate();
  std::ofstream{ca_path} << cert.cert_pem;
  impl_->tls.use_certificate_chain(net::buffer(cert.cert_pem));
  impl_->tls.use_private_key(net::buffer(cert.key_pem), ssl::context::pem);
  impl_->jwks = std::move(jwks);
  tcp::endpoint ep{net::ip::make_address("127.0.0.1"), 0};
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->thread = std::thread([this] {
    while (!impl_->stopping) {
      beast::error_code ec;
      tcp::socket socket{impl_->ioc};
      impl_->acceptor.accept(socket, ec);
      if (ec || impl_->stopping) continue;
      beast::ssl_stream<tcp::socket> stream{std::move(socket), impl_->tls};
      stream.handshake(ssl::stream_base::server, ec);
      if (ec) continue;
      beast::flat_buffer buffer;
      http::request<http::string_body> req;
      http::read(stream, buffer, req, ec);
      if (ec) continue;
      http::response<http::string_body> res{http::status::ok, req.version()};
      {
        std::lock_guard<std::mutex> guard{impl_->mutex};
        res.body() = impl_->jwks;
      }
      ++fetches_;
      res.set(http::field::content_type, "application/json");
      res.keep_alive(false);
      res.prepare_payload();
      http::write(stream, res, ec);
      stream.shutdown(ec);
    }
  });
}

jwks_server::~jwks_server() {
  impl_->stopping = true;
  beast::error_code ec;
  // Wake the blocking accept with one last connection.
  tcp::socket poke{impl_->ioc};
  poke.connect(tcp::endpoint{net::ip::make_address("127.0.0.1"), port_}, ec);
  impl_->thread.join();
}

void jwks_server::set_jwks(std::string jwks) {
  std::lock_guard<std::mutex> guard{impl_->mutex};
  impl_->jwks = std::move(jwks);
}

}  // namespace cl::testing
