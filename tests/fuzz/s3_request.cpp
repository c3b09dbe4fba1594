// The embedded object store's request handling: SigV4 verification of any query and headers,
// the S3 operation classifier, CompleteMultipartUpload bodies, Range and x-amz-copy-source.
#include "domain/sigv4.hpp"
#include "http/s3_protocol.hpp"
#include "tests/fuzz/fuzz.hpp"

#include <map>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto f = cl::fuzz::fields(cl::fuzz::text(data, size), 6);
  std::vector<std::pair<std::string, std::string>> query;
  // Query: "name=value&..." from the third field, decoded as the listener does.
  std::string_view q = f[2];
  while (!q.empty()) {
    auto amp = q.find('&');
    auto item = q.substr(0, amp);
    auto eq = item.find('=');
    auto name = cl::domain::sigv4::uri_decode(item.substr(0, eq));
    auto value = cl::domain::sigv4::uri_decode(eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1));
    if (name && value) query.emplace_back(*name, *value);
    q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
  }
  std::map<std::string, std::string> headers{{"authorization", f[3]}, {"x-amz-date", f[4]},
                                             {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}, {"host", "127.0.0.1:9000"}};
  cl::domain::sigv4::received_request r{f[0], f[1], query, [&](std::string_view name) -> std::optional<std::string> {
                                          auto it = headers.find(std::string{name});
                                          if (it == headers.end()) return std::nullopt;
                                          return it->second;
                                        }};
  (void)cl::domain::sigv4::verify(
    r, [](std::string_view id) -> std::optional<std::string> {
      return id == "CLTESTKEY" ? std::optional<std::string>{"secret"} : std::nullopt;
    },
    "us-east-1", 1'800'000'000);
  (void)cl::http::s3::classify(f[0], f[1], query);
  (void)cl::http::s3::parse_complete_body(f[5]);
  (void)cl::http::s3::parse_range(f[4], 1000);
  (void)cl::http::s3::parse_copy_source(f[3]);
  (void)cl::http::s3::unescape(f[5]);
  return 0;
}
