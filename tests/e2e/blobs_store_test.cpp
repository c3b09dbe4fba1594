// The service runs the embedded S3-compatible object store (the blobs group's listener): its
// credentials are created once in the data dir (mode 0600), requests signed with them are
// served, others refused, and a graceful stop closes its idle connections.

#include "app/blobs_group.hpp"
#include "domain/clock.hpp"
#include "domain/sigv4.hpp"
#include "storage/change_log.hpp"
#include "storage/stores.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/json_response.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

using namespace cl::testing;

namespace {

std::string file_text(const std::string& path) {
  std::ifstream in{path};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// A presigned path for `method` on `key` with these credentials.
std::string presigned(unsigned short port, const std::string& method, const std::string& key, const std::string& id,
                      const std::string& secret) {
  cl::domain::sigv4::presign_request r;
  r.method = method;
  r.host = "127.0.0.1";  // what the test client sends as Host
  r.path = "/contentlake/" + key;
  r.access_key_id = id;
  r.secret_access_key = secret;
  r.region = "us-east-1";
  r.now = cl::domain::now_seconds();
  r.expires = 60;
  return cl::domain::sigv4::presign(r);
}

}  // namespace

TEST_CASE("the service's embedded object store serves requests signed with its generated credentials",
          "[blobs][s3]") {
  test_service svc;
  auto port = svc.service().listener_port("blobs");
  REQUIRE(port);
  auto identity = svc.data_dir() + "/identity/";
  auto id = file_text(identity + "blobs-access-key-id");
  auto secret = file_text(identity + "blobs-secret-access-key");
  CHECK(id.size() == 20);
  CHECK(secret.size() == 40);
  struct stat st{};
  REQUIRE(::stat((identity + "blobs-secret-access-key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  auto put = http_request(*port, "PUT", presigned(*port, "PUT", "t_test/blb_1/upl_1", id, secret), {}, "tide table");
  REQUIRE(put);
  CHECK(put->status == 200);
  auto get = http_request(*port, "GET", presigned(*port, "GET", "t_test/blb_1/upl_1", id, secret));
  REQUIRE(get);
  CHECK(get->status == 200);
  CHECK(get->body == "tide table");
  // A conditional GET or HEAD with the ETag: 304, no body and no Content-Length (RFC 9110 8.6).
  for (const auto* method : {"GET", "HEAD"}) {
    connection c{*port};
    c.send(std::string{method} + " " + presigned(*port, method, "t_test/blb_1/upl_1", id, secret)
           + " HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: " + get->header("etag") + "\r\n\r\n");
    auto not_modified = c.read_response(/*head=*/true);
    REQUIRE(not_modified);
    CHECK(not_modified->status == 304);
    CHECK(not_modified->headers.count("content-length") == 0);
    CHECK(not_modified->header("etag") == get->header("etag"));
  }
  auto forged = http_request(*port, "GET", presigned(*port, "GET", "t_test/blb_1/upl_1", id, "not-the-secret"));
  REQUIRE(forged);
  CHECK(forged->status == 403);
  CHECK(forged->body.find("SignatureDoesNotMatch") != std::string::npos);
  CHECK(std::filesystem::exists(svc.data_dir() + "/blobs/objects"));
  auto two_hosts = http_request(*port, "GET", presigned(*port, "GET", "t_test/blb_1/upl_1", id, secret),
                                {{"Host", "127.0.0.1"}});
  REQUIRE(two_hosts);
  CHECK(two_hosts->status == 400);

  // An idle keep-alive connection to the store does not hold up a graceful stop.
  connection idle{*port};
  auto first = idle.request("GET", presigned(*port, "GET", "t_test/blb_1/upl_1", id, secret));
  REQUIRE(first);
  CHECK(svc.stop_and_wait() == 0);
}

TEST_CASE("the generated credentials survive a restart", "[blobs][s3]") {
  temp_dir dir;
  std::string first_id;
  {
    test_service svc{[&](cl::config::settings& s) { s.data_dir = dir.path; }};
    first_id = file_text(dir.path + "/identity/blobs-access-key-id");
  }
  test_service again{[&](cl::config::settings& s) { s.data_dir = dir.path; }};
  CHECK(file_text(dir.path + "/identity/blobs-access-key-id") == first_id);
}

TEST_CASE("a committed blob version appends a change-log entry; an upload that only started does not",
          "[blobs][changes]") {
  // URLs for Host 127.0.0.1 (what the test client sends) on the store's ephemeral port.
  test_service svc([](cl::config::settings& s) {
    s.groups.get<cl::app::blobs_settings>().embedded_public_url = "http://127.0.0.1";
  });
  auto token = token_with("content-lake.read content-lake.write");
  auto start = [&] {
    auto r = post_json(svc.port(), "/v0/content-lake/blobs/uploads", token, R"({"size":10,"content_type":"text/plain"})");
    REQUIRE(r);
    REQUIRE(r->status == 201);
    return json_object_of(r);
  };
  auto blob_changes = [&] {
    std::vector<std::string> ids;
    for (const auto& e : svc.service().store().read_from(0, 100000))
      if (e.kind == cl::storage::change_kind::blob) {
        CHECK(e.op == cl::storage::change_op::created);
        ids.push_back(e.id);
      }
    return ids;
  };
  auto up = start();
  start();  // started, never completed: no entry
  std::string url{up.at("url").as_string()};
  auto put = http_request(*svc.service().listener_port("blobs"), "PUT", url.substr(std::string{"http://127.0.0.1"}.size()), {},
                          "tide table");
  REQUIRE(put);
  REQUIRE(put->status == 200);
  CHECK(blob_changes().empty());
  auto done = post_json(svc.port(), "/v0/content-lake/blobs/uploads/" + std::string{up.at("upload_id").as_string()} + "/complete",
                        token, R"({"sha256":")" + cl::domain::sigv4::sha256_hex("tide table") + R"("})");
  REQUIRE(done);
  REQUIRE(done->status == 201);
  CHECK(blob_changes() == std::vector<std::string>{std::string{up.at("blob_id").as_string()}});
}
