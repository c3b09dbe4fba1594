// Runs the embedded S3 listener alone on an ephemeral loopback port, for client tests with real
// S3 clients (tests/client/s3_boto3.py): s3_test_server DATA_DIR ACCESS_KEY SECRET [MIN_PART_BYTES [MAX_CONNECTIONS]]
// prints the port on stdout, serves until stdin closes.

#include "http/s3_server.hpp"
#include "storage/objects/object_files.hpp"

#include <boost/asio/io_context.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: s3_test_server DATA_DIR ACCESS_KEY SECRET [MIN_PART_BYTES [MAX_CONNECTIONS]]\n";
    return 2;
  }
  // The access log goes to standard error (standard output carries the port), where the client
  // test looks for signatures and secrets that must never be there.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("s3"));
  boost::asio::io_context ioc;
  cl::http::s3_server_config cfg;
  cfg.port = 0;
  cfg.access_key_id = argv[2];
  cfg.secret_access_key = argv[3];
  if (argc > 4) cfg.min_part_size = std::stoull(argv[4]);
  if (argc > 5) cfg.max_connections = std::stoi(argv[5]);
  cfg.files = std::make_shared<cl::storage::object_files>(std::string{argv[1]} + "/blobs");
  cl::http::s3_server server{ioc, cfg};
  server.run();
  std::cout << server.port() << std::endl;
  std::thread stdin_watch{[&] {
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    ioc.stop();
  }};
  ioc.run();
  stdin_watch.join();
  return 0;
}
