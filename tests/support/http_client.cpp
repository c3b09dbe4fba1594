#include "tests/support/http_client.hpp"

#include <boost/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>

namespace cl::testing {

std::string http_response::header(const std::string& name) const {
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  auto it = headers.find(key);
  return it == headers.end() ? std::string{} : it->second;
}

connection::connection(unsigned short port, int timeout_ms, int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket");
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("connect to port " + std::to_string(port) + " failed");
  }
}

connection::~connection() {
  if (fd_ >= 0) ::close(fd_);
}

void connection::send(const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    auto n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close early (limits); the response read tells
    sent += static_cast<std::size_t>(n);
  }
}

std::optional<http_response> connection::read_response(bool head_only) {
  auto fill = [this]() {
    char buf[16384];
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
    return true;
  };
  std::size_t header_end;
  while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  http_response res;
  std::string head = buffer_.substr(0, header_end);
  auto line_end = head.find("\r\n");
  auto status_line = head.substr(0, line_end);
  auto sp = status_line.find(' ');
  if (sp == std::string::npos) return std::nullopt;
  res.status = std::stoi(status_line.substr(sp + 1, 3));
  std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    auto end = head.find("\r\n", pos);
    if (end == std::string::npos) end = head.size();
    auto line = head.substr(pos, end - pos);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      auto value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      res.headers[name] = value;
    }
    pos = end + 2;
  }
  std::size_t body_start = header_end + 4;
  if (head_only) {  // the answer to HEAD has the GET's headers and no body, whatever they announce
    buffer_.erase(0, body_start);
    return res;
  }
  if (res.header("transfer-encoding") == "chunked") {
    // Chunked: size line, data, CRLF ... until the zero-size chunk and its trailer CRLF.
    std::size_t pos = body_start;
    res.chunks = 0;
    while (true) {
      std::size_t eol;
      while ((eol = buffer_.find("\r\n", pos)) == std::string::npos)
        if (!fill()) return std::nullopt;
      auto size = std::stoul(buffer_.substr(pos, eol - pos), nullptr, 16);
      while (buffer_.size() < eol + 2 + size + 2)
        if (!fill()) return std::nullopt;
      if (size == 0) {
        buffer_.erase(0, eol + 4);
        return res;
      }
      res.body += buffer_.substr(eol + 2, size);
      ++res.chunks;
      pos = eol + 2 + size + 2;
    }
  }
  std::size_t length = 0;
  if (auto it = res.headers.find("content-length"); it != res.headers.end()) length = std::stoul(it->second);
  while (buffer_.size() < body_start + length)
    if (!fill()) return std::nullopt;
  res.body = buffer_.substr(body_start, length);
  buffer_.erase(0, body_start + length);
  return res;
}

bool connection::wait_closed(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{timeout_ms};
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd_, POLLIN, 0};
    int left = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (::poll(&p, 1, std::max(1, left)) <= 0) return false;
    char buf[4096];
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
  return false;
}

std::optional<http_response> connection::request(const std::string& method, const std::string& target,
                                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                                 const std::string& body) {
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  send(req);
  return read_response(method == "HEAD");
}

std::optional<http_response> http_request(unsigned short port, const std::string& method, const std::string& target,
                                          const std::vector<std::pair<std::string, std::string>>& headers,
                                          const std::string& body) {
  connection c{port};
  return c.request(method, target, headers, body);
}

std::optional<http_response> post_json(unsigned short port, const std::string& path, const std::string& token,
                                       const std::string& body, const std::string& content_type) {
  std::vector<std::pair<std::string, std::string>> headers = {{"Authorization", "Bearer " + token}};
  if (!content_type.empty()) headers.emplace_back("Content-Type", content_type);
  return http_request(port, "POST", path, headers, body);
}

std::string reason_of(const http_response& r) {
  boost::system::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec || !v.is_object()) return {};
  auto* e = v.as_object().if_contains("error");
  if (!e || !e->is_object()) return {};
  auto* reason = e->as_object().if_contains("reason");
  return reason && reason->is_string() ? std::string{reason->as_string()} : std::string{};
}

std::optional<http_response> get_with_token(unsigned short port, const std::string& target, const std::string& token) {
  return http_request(port, "GET", target, {{"Authorization", "Bearer " + token}});
}

double metric_value(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

double metric(unsigned short admin_port, const std::string& series) {
  auto m = http_request(admin_port, "GET", "/metrics");
  return m ? metric_value(m->body, series) : -1;
}

}  // namespace cl::testing
