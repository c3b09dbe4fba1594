// The blob store: uploads and their expiry index follow the upload's state; versions are read
// by number or latest, per tenant.

#include "storage/blob_store.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

upload_record upload_of(const std::string& tenant, const std::string& id, std::int64_t expires_at) {
  upload_record u;
  u.tenant = tenant;
  u.id = id;
  u.blob_id = "blb_1";
  u.uploader = "u_alice";
  u.client_id = "a_app";
  u.method = "MULTIPART";
  u.store_upload_id = "mpu_1";
  u.object_key = tenant + "/blb_1/" + id;
  u.content_type = "image/png";
  u.size = 70 << 20;
  u.part_size = 16 << 20;
  u.expires_at = expires_at;
  return u;
}

std::vector<std::string> expired_ids(const record_store& store, std::int64_t now) {
  std::vector<std::string> out;
  for (const auto& u : blobs(store).expired_uploads(now, 100)) out.push_back(u.id);
  return out;
}

void write(record_store& store, const std::function<void(write_txn&)>& f) {
  store.apply({[&](write_txn& tx) {
    f(tx);
    return true;
  }});
}

}  // namespace

TEST_CASE("an upload's expiry index follows its state: in progress until completed or aborted", "[storage][blobs]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto a = upload_of("t1", "upl_a", 100), b = upload_of("t1", "upl_b", 50), c = upload_of("t2", "upl_c", 200);
  write(*store, [&](write_txn& tx) {
    for (const auto* u : {&a, &b, &c}) blobs(tx).put_upload(*u);
  });
  CHECK(blobs(*store).upload("t1", "upl_a") == a);
  CHECK_FALSE(blobs(*store).upload("t2", "upl_a"));  // tenant-scoped
  CHECK(expired_ids(*store, 10).empty());
  CHECK(expired_ids(*store, 101) == std::vector<std::string>{"upl_b", "upl_a"});  // soonest first
  CHECK(expired_ids(*store, 1000) == std::vector<std::string>{"upl_b", "upl_a", "upl_c"});

  // New URLs move the expiry; completion and abort take the upload out of the index.
  a.expires_at = 500;
  b.state = "COMPLETED";
  b.version = 1;
  c.state = "ABORTED";
  write(*store, [&](write_txn& tx) {
    for (const auto* u : {&a, &b, &c}) blobs(tx).put_upload(*u);
  });
  CHECK(expired_ids(*store, 400).empty());
  CHECK(expired_ids(*store, 1000) == std::vector<std::string>{"upl_a"});
  if (cl::testing::key_value_backend()) CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("blob_upload_expiry")) == 1);
  CHECK(blobs(*store).upload("t1", "upl_b")->state == "COMPLETED");
}

TEST_CASE("blob versions are read by number or latest, per tenant", "[storage][blobs]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  CHECK_FALSE(blobs(*store).version("t1", "blb_1", 0));
  std::vector<blob_version> versions;
  for (int i = 1; i <= 300; ++i) {  // many versions: the latest is still one read (keys newest first)
    blob_version v{"t1", "blb_1", i, static_cast<std::uint64_t>(i), "image/png", "ab", "2026-11-22T00:00:00Z",
                   "u_alice", "t1/blb_1/upl_" + std::to_string(i)};
    versions.push_back(v);
  }
  write(*store, [&](write_txn& tx) {
    for (const auto& v : versions) blobs(tx).add_version(v);
    blobs(tx).add_version({"t1", "blb_2", 1, 9, "text/plain", "cd", "2026-11-22T00:00:00Z", "u_bob", "t1/blb_2/upl_x"});
    // Inside the transaction, the latest already counts what it added.
    CHECK(blobs(tx).version("t1", "blb_1", 0)->version == 300);
  });
  CHECK(blobs(*store).version("t1", "blb_1", 0) == versions.back());
  CHECK(blobs(*store).version("t1", "blb_1", 7) == versions[6]);
  CHECK_FALSE(blobs(*store).version("t1", "blb_1", 301));
  CHECK(blobs(*store).version("t1", "blb_2", 0)->version == 1);
  CHECK_FALSE(blobs(*store).version("t2", "blb_1", 0));
}

TEST_CASE("an upload completed and aborted through two nodes at once ends one way, and the other sees it",
          "[storage][blobs][postgresql]") {
  // The completion records the version when the upload is still in progress; the abort (or the
  // expiry sweep) marks it aborted when it is. The read of a write locks the upload: the abort
  // waits for the completion's commit, then finds it completed and refuses.
  cl::testing::racing_stores nodes{"upload"};
  write(*nodes.a, [](write_txn& tx) { blobs(tx).put_upload(upload_of("t1", "upl_a", 1000)); });
  auto kept = nodes.race(
    [](write_txn& tx, const std::function<bool()>& wait) {
      auto u = blobs(tx).upload("t1", "upl_a");
      if (u->state != "IN_PROGRESS" || !wait()) return false;
      u->state = "COMPLETED";
      u->version = 1;
      blobs(tx).put_upload(*u);
      return true;
    },
    [](write_txn& tx) {
      auto u = blobs(tx).upload("t1", "upl_a");
      if (u->state != "IN_PROGRESS") return false;
      u->state = "ABORTED";
      blobs(tx).put_upload(*u);
      return true;
    });
  CHECK(kept == std::pair<bool, bool>{true, false});
  CHECK(blobs(*nodes.a).upload("t1", "upl_a")->state == "COMPLETED");
}
