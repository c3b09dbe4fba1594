// The blob broker's view of the embedded store: URLs it presigns work against the real listener,
// and its server-side calls see what clients uploaded (sizes, store-computed SHA-256).

#include "domain/sigv4.hpp"
#include "http/s3_server.hpp"
#include "storage/objects/blob_backend.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <catch2/catch.hpp>

#include <ctime>
#include <thread>

using namespace cl;

namespace {

/// The embedded listener on an ephemeral port, on its own thread, for the test's life.
struct running_store {
  explicit running_store(const std::string& dir) : files(std::make_shared<storage::object_files>(dir + "/blobs")) {
    http::s3_server_config cfg;
    cfg.port = 0;
    cfg.access_key_id = "CLTESTKEY0000000003";
    cfg.secret_access_key = "backend-test-secret";
    cfg.files = files;
    cfg.min_part_size = 4;  // the embedded store's test setting: tiny parts
    cfg.access_log = false;
    server = std::make_unique<http::s3_server>(ioc, cfg);
    server->run();
    thread = std::thread{[this] { ioc.run(); }};
    storage::embedded_backend_config b;
    b.files = files;
    b.public_url = "http://127.0.0.1:" + std::to_string(server->port());
    b.host = "127.0.0.1";  // what the test client sends as Host
    b.bucket = "contentlake";
    b.region = "us-east-1";
    b.access_key_id = cfg.access_key_id;
    b.secret_access_key = cfg.secret_access_key;
    backend = storage::make_embedded_backend(b);
  }
  ~running_store() {
    server->stop();
    work.reset();
    ioc.stop();
    thread.join();
  }
  /// The path and query of a URL the backend presigned (the test client adds the host).
  static std::string target(const std::string& url) { return url.substr(url.find('/', std::string{"http://"}.size())); }

  boost::asio::io_context ioc;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work = boost::asio::make_work_guard(ioc);
  std::shared_ptr<storage::object_files> files;
  std::unique_ptr<http::s3_server> server;
  std::unique_ptr<storage::blob_backend> backend;
  std::thread thread;
};

}  // namespace

TEST_CASE("URLs the broker presigns for the embedded store upload and download; its calls see the result",
          "[blobs][backend]") {
  testing::temp_dir dir;
  running_store store{dir.path};
  auto now = static_cast<std::int64_t>(std::time(nullptr));
  auto port = store.server->port();

  auto put = testing::http_request(port, "PUT", running_store::target(store.backend->presign_put("t/blb_1/upl_1", 11, now, 60)),
                                   {}, "single body");
  REQUIRE(put);
  CHECK(put->status == 200);
  // The URL takes exactly the size it was made for (signed into it).
  auto longer_body = testing::http_request(
    port, "PUT", running_store::target(store.backend->presign_put("t/blb_1/upl_9", 11, now, 60)), {}, "single body!");
  REQUIRE(longer_body);
  CHECK(longer_body->status == 400);
  CHECK(longer_body->body.find("exactly 11 bytes") != std::string::npos);
  storage::expected_object single{11, domain::sigv4::sha256_hex("single body"), 0};
  auto checked = store.backend->check_single("t/blb_1/upl_1", single);
  REQUIRE(checked.kind == storage::finish_result::done);
  CHECK(checked.object.size == 11);
  CHECK(checked.object.sha256 == single.sha256);
  CHECK(store.backend->check_single("t/blb_1/upl_1", {11, domain::sigv4::sha256_hex("other body!"), 0}).kind
        == storage::finish_result::checksum_mismatch);
  CHECK(store.backend->check_single("t/blb_1/upl_1", {12, single.sha256, 0}).kind == storage::finish_result::size_mismatch);
  CHECK(store.backend->check_single("t/none", single).kind == storage::finish_result::nothing_uploaded);
  auto download = store.backend->presign_get("t/blb_1/upl_1", "text/plain", now, 900);
  auto get = testing::http_request(port, "GET", running_store::target(download));
  REQUIRE(get);
  CHECK(get->body == "single body");
  CHECK(get->header("content-type") == "text/plain");  // the declared type, signed into the URL
  CHECK(download.find("X-Amz-Expires=900") != std::string::npos);

  const std::string key = "t/blb_2/upl_2";
  auto id = store.backend->create_multipart(key, "video/mp4");
  auto put_part = [&](int n, const std::string& body) {
    auto r = testing::http_request(port, "PUT", running_store::target(store.backend->presign_part(key, id, n, body.size(), now, 60)), {},
                                   body);
    REQUIRE(r);
    CHECK(r->status == 200);
  };
  storage::expected_object whole{12, domain::sigv4::sha256_hex("first-second"), 2};
  put_part(2, "second");
  auto missing = store.backend->complete_multipart(key, id, whole);
  CHECK(missing.kind == storage::finish_result::missing_parts);
  CHECK(missing.missing == std::vector<int>{1});
  put_part(1, "FIRST-");  // wrong bytes: the completion refuses and the upload stays
  CHECK(store.backend->complete_multipart(key, id, whole).kind == storage::finish_result::checksum_mismatch);
  CHECK_FALSE(store.backend->check_single(key, whole).kind == storage::finish_result::done);
  CHECK(store.backend->list_parts(key, id)->size() == 2);
  put_part(1, "first--");  // one byte too many
  auto longer = store.backend->complete_multipart(key, id, whole);
  CHECK(longer.kind == storage::finish_result::size_mismatch);
  CHECK(longer.size == 13);
  put_part(1, "first-");  // the corrected part
  auto done = store.backend->complete_multipart(key, id, whole);
  REQUIRE(done.kind == storage::finish_result::done);
  CHECK(done.object.sha256 == whole.sha256);
  // Completing again (the first answer was lost) finds the object and answers the same.
  CHECK(store.backend->complete_multipart(key, id, whole).kind == storage::finish_result::done);

  auto gone = store.backend->create_multipart("t/blb_3/upl_3", "image/png");
  CHECK(store.backend->complete_multipart("t/blb_3/upl_3", gone, {1, domain::sigv4::sha256_hex("x"), 1}).kind
        == storage::finish_result::missing_parts);
  store.backend->abort("t/blb_3/upl_3", gone, now + 60);
  CHECK(store.backend->complete_multipart("t/blb_3/upl_3", gone, {1, domain::sigv4::sha256_hex("x"), 1}).kind
        == storage::finish_result::nothing_uploaded);
  store.backend->abort("t/blb_1/upl_1", "", now + 60);
  CHECK(store.backend->check_single("t/blb_1/upl_1", single).kind == storage::finish_result::nothing_uploaded);
}

TEST_CASE("a committed single upload lives under its own key; the upload's URL is refused after completion or abort",
          "[blobs][backend]") {
  testing::temp_dir dir;
  running_store store{dir.path};
  auto now = static_cast<std::int64_t>(std::time(nullptr));
  auto port = store.server->port();
  auto put = [&](const std::string& url, const std::string& body) {
    auto r = testing::http_request(port, "PUT", running_store::target(url), {}, body);
    REQUIRE(r);
    return *r;
  };
  const std::string upload_key = "uploads/t/blb_1/upl_1", version_key = "t/blb_1/upl_1";
  auto url = store.backend->presign_put(upload_key, 8, now, 600);
  CHECK(put(url, "original").status == 200);
  storage::expected_object original{8, domain::sigv4::sha256_hex("original"), 0};

  // A wrong declared SHA-256: refused, the bytes stay at the upload key and its URL still works.
  auto wrong = store.backend->commit_single(upload_key, version_key, {8, domain::sigv4::sha256_hex("tampered"), 0}, now + 600);
  CHECK(wrong.kind == storage::finish_result::checksum_mismatch);
  CHECK_FALSE(store.files->stat("contentlake", version_key));
  CHECK(put(url, "original").status == 200);

  auto done = store.backend->commit_single(upload_key, version_key, original, now + 600);
  REQUIRE(done.kind == storage::finish_result::done);
  CHECK(store.files->stat("contentlake", version_key)->sha256 == original.sha256);
  CHECK_FALSE(store.files->stat("contentlake", upload_key));
  // The URL is refused now, with S3's error, and nothing is stored anywhere.
  auto late = put(url, "tampered");
  CHECK(late.status == 403);
  CHECK(late.body.find("<Code>AccessDenied</Code>") != std::string::npos);
  CHECK_FALSE(store.files->stat("contentlake", upload_key));
  CHECK(store.files->stat("contentlake", version_key)->sha256 == original.sha256);
  // A completion retried after its answer was lost finds the version where it was committed.
  CHECK(store.backend->commit_single(upload_key, version_key, original, now + 600).kind == storage::finish_result::done);
  // A store reopened after the URL's time forgets the closed key; before, it keeps it.
  CHECK(storage::object_files{dir.path + "/blobs", false}.closed("contentlake", upload_key));

  // Aborted: the URL is refused too.
  auto aborted_url = store.backend->presign_put("uploads/t/blb_2/upl_2", 3, now, 600);
  CHECK(put(aborted_url, "abc").status == 200);
  store.backend->abort("uploads/t/blb_2/upl_2", "", now + 600);
  CHECK(put(aborted_url, "abc").status == 403);
  CHECK_FALSE(store.files->stat("contentlake", "uploads/t/blb_2/upl_2"));

  // Closed until a time that has passed: the marker goes when the store opens again.
  store.files->close_key("contentlake", "uploads/t/blb_3/upl_3", now - 1);
  CHECK_FALSE(store.files->closed("contentlake", "uploads/t/blb_3/upl_3"));
}

TEST_CASE("the embedded store closes connections past its cap at once", "[blobs][backend]") {
  testing::temp_dir dir;
  boost::asio::io_context ioc;
  http::s3_server_config cfg;
  cfg.port = 0;
  cfg.access_key_id = "K";
  cfg.secret_access_key = "S";
  cfg.files = std::make_shared<storage::object_files>(dir.path + "/blobs");
  cfg.max_connections = 2;
  cfg.access_log = false;
  http::s3_server server{ioc, cfg};
  server.run();
  auto work = boost::asio::make_work_guard(ioc);
  std::thread t{[&] { ioc.run(); }};
  {
    // Two idle connections fill the cap; the third is closed without an answer.
    testing::connection a{server.port()}, b{server.port()};
    testing::connection c{server.port()};
    CHECK(c.wait_closed(5000));
    // A connection under the cap is served (an unsigned request: 403).
    auto ra = a.request("GET", "/contentlake/k");
    REQUIRE(ra);
    CHECK(ra->status == 403);
  }
  server.stop();
  work.reset();
  ioc.stop();
  t.join();
}
