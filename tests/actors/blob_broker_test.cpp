// The blob broker, on CAF's deterministic scheduler: what it answers itself (a SINGLE upload's
// presigned PUT, the refusals of completions, lookups with presigned GETs) from the records it
// reads, with the embedded object store's backend over a temporary directory. Calls that block on
// the store run on detached workers and are covered end to end (tests/e2e/blobs_store_test.cpp,
// tests/client/blobs_api.py). No sockets, no waiting.

#include "actors/blobs/blob_broker.hpp"
#include "domain/clock.hpp"
#include "storage/kv/memory_store.hpp"
#include "storage/objects/object_files.hpp"

#include "tests/support/deterministic.hpp"

#include <boost/json/parse.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <unistd.h>

using namespace cl;
using namespace cl::actors;

namespace {

struct broker : testing::deterministic {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cl-broker-test-" + std::to_string(::getpid()));
  std::shared_ptr<blob_broker_config> config = std::make_shared<blob_broker_config>();
  blob_broker_actor actor;
  blob_caller alice{"t_1", "u_alice", "a_app"};

  broker() {
    std::filesystem::create_directories(dir);
    config->store = storage::open_memory_store();
    storage::embedded_backend_config e;
    e.files = std::make_shared<storage::object_files>(dir);
    e.public_url = "http://127.0.0.1:8081";
    e.host = "127.0.0.1:8081";
    e.bucket = "contentlake";
    e.region = "us-east-1";
    e.access_key_id = "AKIDTEST";
    e.secret_access_key = "secret";
    config->backend = storage::make_embedded_backend(e);
    config->limits.multipart_threshold = 1 << 20;
    config->limits.max_blob_bytes = 8 << 20;
    actor = sys->spawn(blob_broker, std::shared_ptr<const blob_broker_config>{config});
    sched->run();
  }
  ~broker() {
    kill(actor);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  template <class Answer, class... Ts>
  Answer ask(Ts... xs) {
    return deterministic::ask<Answer>(actor, xs...);
  }

  void put(storage::upload_record u, std::optional<storage::blob_version> v = std::nullopt) {
    REQUIRE(config->store->apply({[u, v](storage::write_txn& tx) {
      storage::blobs(tx).put_upload(u);
      if (v) storage::blobs(tx).add_version(*v);
      return true;
    }})[0]);
  }

  storage::upload_record upload(const std::string& id, const std::string& state, std::int64_t expires_at) {
    storage::upload_record u;
    u.tenant = "t_1";
    u.id = id;
    u.blob_id = "blb_1";
    u.uploader = alice.sub;
    u.client_id = alice.client_id;
    u.method = "SINGLE";
    u.object_key = "uploads/t_1/blb_1/" + id;
    u.content_type = "image/png";
    u.size = 10;
    u.expires_at = expires_at;
    u.state = state;
    return u;
  }
};

}  // namespace

TEST_CASE("a SINGLE upload is answered by the broker itself: a presigned PUT for exactly its size",
          "[actors][blobs]") {
  broker b;
  auto o = b.ask<blob_outcome>(upload_atom_v, b.alice, domain::upload_request{1000, "image/png", std::nullopt});
  REQUIRE_FALSE(o.error);
  CHECK(o.upload.method == "SINGLE");
  CHECK(o.upload.tenant == "t_1");
  CHECK(o.upload.uploader == "u_alice");
  CHECK(o.upload.state == "IN_PROGRESS");
  CHECK(o.upload.id.rfind("upl_", 0) == 0);
  CHECK(o.upload.blob_id.rfind("blb_", 0) == 0);
  CHECK(o.upload.expires_at > domain::now_seconds());
  auto body = boost::json::parse(o.body).as_object();
  auto url = std::string{body.at("url").as_string()};
  CHECK(url.rfind("http://127.0.0.1:8081/contentlake/uploads/t_1/", 0) == 0);
  CHECK(url.find("X-Cl-Length=1000") != std::string::npos);  // the declared size, signed
  CHECK(url.find("X-Amz-Signature=") != std::string::npos);
  // The broker stores nothing itself: the plan writes the upload through the writer.
  CHECK_FALSE(storage::blobs(*b.config->store).upload("t_1", o.upload.id));
}

TEST_CASE("the broker refuses an upload over the limit, and a version of a blob the caller did not upload",
          "[actors][blobs]") {
  broker b;
  auto big = b.ask<blob_outcome>(upload_atom_v, b.alice, domain::upload_request{(8u << 20) + 1, "image/png", std::nullopt});
  REQUIRE(big.error);
  CHECK(big.error->id == domain::error_id::limit_exceeded);
  auto none = b.ask<blob_outcome>(upload_atom_v, b.alice, domain::upload_request{10, "image/png", std::string{"blb_none"}});
  REQUIRE(none.error);
  CHECK(none.error->id == domain::error_id::blob_not_found);
  storage::blob_version v{"t_1", "blb_1", 1, 10, "image/png", std::string(64, 'a'), "2026-01-01T00:00:00Z", "u_bob", "t_1/blb_1/upl_0"};
  b.put(b.upload("upl_0", "COMPLETED", 0), v);
  auto other = b.ask<blob_outcome>(upload_atom_v, b.alice, domain::upload_request{10, "image/png", std::string{"blb_1"}});
  REQUIRE(other.error);
  CHECK(other.error->id == domain::error_id::access_denied);
}

TEST_CASE("a completion is refused for an unknown, another's, aborted or expired upload; a completed one answers "
          "its recorded version",
          "[actors][blobs]") {
  broker b;
  auto now = domain::now_seconds();
  auto unknown = b.ask<blob_outcome>(complete_atom_v, b.alice, std::string{"upl_nope"}, std::string{});
  REQUIRE(unknown.error);
  CHECK(unknown.error->id == domain::error_id::upload_not_found);

  b.put(b.upload("upl_live", "IN_PROGRESS", now + 3600));
  blob_caller bob{"t_1", "u_bob", "a_app"};
  auto anothers = b.ask<blob_outcome>(complete_atom_v, bob, std::string{"upl_live"}, std::string{});
  REQUIRE(anothers.error);
  CHECK(anothers.error->id == domain::error_id::upload_not_found);  // never confirms another's id
  blob_caller elsewhere{"t_2", "u_alice", "a_app"};
  CHECK(b.ask<blob_outcome>(complete_atom_v, elsewhere, std::string{"upl_live"}, std::string{}).error->id
        == domain::error_id::upload_not_found);

  b.put(b.upload("upl_aborted", "ABORTED", now + 3600));
  auto aborted = b.ask<blob_outcome>(complete_atom_v, b.alice, std::string{"upl_aborted"}, std::string{});
  REQUIRE(aborted.error);
  CHECK(aborted.error->id == domain::error_id::upload_not_in_progress);
  CHECK(aborted.error->message.find("aborted") != std::string::npos);

  b.put(b.upload("upl_old", "IN_PROGRESS", now - 1));
  auto expired = b.ask<blob_outcome>(complete_atom_v, b.alice, std::string{"upl_old"}, std::string{});
  REQUIRE(expired.error);
  CHECK(expired.error->message.find("expired") != std::string::npos);
  auto parts = b.ask<blob_outcome>(parts_atom_v, b.alice, std::string{"upl_old"}, std::int32_t{1});
  REQUIRE(parts.error);
  CHECK(parts.error->id == domain::error_id::upload_not_in_progress);

  auto done = b.upload("upl_done", "COMPLETED", now + 3600);
  done.version = 1;
  storage::blob_version v{"t_1", "blb_1", 1, 10, "image/png", std::string(64, 'b'), "2026-01-01T00:00:00Z", "u_alice", "t_1/blb_1/upl_done"};
  b.put(done, v);
  auto again = b.ask<blob_outcome>(complete_atom_v, b.alice, std::string{"upl_done"}, std::string{});
  REQUIRE_FALSE(again.error);
  CHECK(again.recorded);
  CHECK(again.version == v);
}

TEST_CASE("a lookup answers what exists with a presigned GET, the latest version for 0, and nothing for a blob "
          "that does not",
          "[actors][blobs]") {
  broker b;
  storage::blob_version v1{"t_1", "blb_1", 1, 10, "text/html", std::string(64, 'c'), "2026-01-01T00:00:00Z", "u_alice", "t_1/blb_1/upl_a"};
  auto v2 = v1;
  v2.version = 2;
  v2.object_key = "t_1/blb_1/upl_b";
  b.put(b.upload("upl_a", "COMPLETED", 0), v1);
  b.put(b.upload("upl_b", "COMPLETED", 0), v2);
  auto found = b.ask<std::vector<blob_found>>(
    locate_atom_v, b.alice, std::vector<blob_lookup>{{"blb_1", 0}, {"blb_1", 1}, {"blb_1", 3}, {"blb_none", 0}});
  REQUIRE(found.size() == 4);
  CHECK(found[0].exists);
  CHECK(found[0].version.version == 2);
  CHECK(found[0].url.find("/contentlake/t_1/blb_1/upl_b?") != std::string::npos);
  CHECK(found[0].expires_at > domain::now_seconds());
  CHECK(found[1].version.version == 1);
  CHECK_FALSE(found[2].exists);
  CHECK(found[2].uploader == "u_alice");
  CHECK_FALSE(found[3].exists);
  CHECK(found[3].url.empty());
  // Another tenant's lookup of the same id finds nothing.
  auto elsewhere = b.ask<std::vector<blob_found>>(locate_atom_v, blob_caller{"t_2", "u_alice", "a_app"},
                                                  std::vector<blob_lookup>{{"blb_1", 0}});
  CHECK_FALSE(elsewhere[0].exists);
}
