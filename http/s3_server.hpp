#pragma once
/// The embedded S3-compatible object store's listener (issue 13): path-style S3 over HTTP/1.1,
/// SigV4 in the Authorization header or the query string, bodies streamed to `object_files` on a
/// disk thread (an I/O thread never waits for a disk write), ranged GETs streamed back.
/// Internal to http/ and app/: Beast stays out of this header.

#include <cstdint>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}

namespace cl::storage {
class object_files;
}

namespace cl::http {

struct s3_server_config {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8081;
  std::string bucket = "contentlake";
  std::string region = "us-east-1";
  std::string access_key_id;
  std::string secret_access_key;
  std::shared_ptr<storage::object_files> files;
  std::uint64_t min_part_size = 5 * 1024 * 1024;  ///< every part but the last (EntityTooSmall)
  std::uint64_t max_object_bytes = 50ull << 30;    ///< a larger body is refused (EntityTooLarge)
  bool access_log = true;  ///< one line per request: method, key path, status (never the query)
  int max_connections = 1024;  ///< open connections at most; a new one past it is closed at once
};

class s3_server {
public:
  /// Binds the address; throws std::runtime_error naming it when it cannot.
  s3_server(boost::asio::io_context& ioc, s3_server_config cfg);
  ~s3_server();
  s3_server(const s3_server&) = delete;
  s3_server& operator=(const s3_server&) = delete;

  void run();
  std::uint16_t port() const;
  /// Stops accepting; sessions end with their connection.
  void stop();

  struct impl;  ///< shared with the sessions (http/s3_server.cpp)

private:
  std::shared_ptr<impl> impl_;
};

}  // namespace cl::http
