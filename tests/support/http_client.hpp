#pragma once
// A small blocking HTTP/1.1 client over loopback for end-to-end tests. Every read has a socket
// timeout, so a server that never answers fails the test instead of hanging it.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cl::testing {

struct http_response {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< names lower-cased
  std::string body;
  int chunks = -1;  ///< chunks of a chunked body; -1 when Content-Length framed

  std::string header(const std::string& name) const;
};

/// One TCP connection to 127.0.0.1:port.
class connection {
public:
  /// `receive_buffer` > 0 sets SO_RCVBUF before connecting (a client that reads slowly).
  explicit connection(unsigned short port, int timeout_ms = 10000, int receive_buffer = 0);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Sends raw bytes.
  void send(const std::string& bytes);

  /// Reads one response (Content-Length framed or chunked; `head`: the answer to a HEAD, which
  /// has no body). nullopt when the server closed or timed out first.
  std::optional<http_response> read_response(bool head = false);

  /// True when the server closes the connection before `timeout_ms` (reads and drops bytes).
  bool wait_closed(int timeout_ms);

  /// Sends a request and reads its response.
  std::optional<http_response> request(const std::string& method, const std::string& target,
                                       const std::vector<std::pair<std::string, std::string>>& headers = {},
                                       const std::string& body = {});

private:
  int fd_ = -1;
  std::string buffer_;
};

/// One request on a fresh connection; fails the calling test through nullopt on no answer.
std::optional<http_response> http_request(unsigned short port, const std::string& method, const std::string& target,
                                          const std::vector<std::pair<std::string, std::string>>& headers = {},
                                          const std::string& body = {});

/// POST `body` as `content_type` with a bearer token.
std::optional<http_response> post_json(unsigned short port, const std::string& path, const std::string& token,
                                       const std::string& body, const std::string& content_type = "application/json");

/// The value of series `series` (a metric's name, with its labels as rendered) in a /metrics text;
/// -1 when absent.
double metric_value(const std::string& text, const std::string& series);

/// The value of series `series` (name and labels, as rendered) on the /metrics of the admin
/// listener at `admin_port`, or -1 (not there, or no answer).
double metric(unsigned short admin_port, const std::string& series);

/// The `error.reason` of an error response (empty when the body is not the error shape).
std::string reason_of(const http_response& r);

/// GET with a bearer token.
std::optional<http_response> get_with_token(unsigned short port, const std::string& target, const std::string& token);

}  // namespace cl::testing
