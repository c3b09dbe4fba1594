// A typed store added the way a route group adds one: its reads and writes, its table and its
// key-value implementation all in one new file, registered from there. Nothing in storage/ names
// it, and it works on both backends, inside the writer's transaction and in the store's views.

#include "storage/kv.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

using namespace cl::storage;

namespace {

class note_writes;

/// A group's store: one note per (tenant, topic).
class note_reads : public typed_store {
public:
  using writes = note_writes;
  virtual std::optional<std::string> note(std::string_view tenant, std::string_view topic) const = 0;
};

class note_writes : public note_reads {
public:
  static const store_kind kind;
  virtual void put(std::string_view tenant, std::string_view topic, std::string_view text) = 0;
};

namespace tables {
const kv::table notes = kv::declare_table("test_notes");
}

class kv_note_store final : public note_writes {
public:
  explicit kv_note_store(const kv::context& c) : r_(c.r), w_(c.w) {}
  std::optional<std::string> note(std::string_view tenant, std::string_view topic) const override {
    return r_.get(tables::notes, kv::tenant_key(tenant, topic));
  }
  void put(std::string_view tenant, std::string_view topic, std::string_view text) override {
    w_->put(tables::notes, kv::tenant_key(tenant, topic), text);
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

const store_kind note_writes::kind = kv::register_store<kv_note_store>();

}  // namespace

TEST_CASE("a store registered from its own file is read and written through every view", "[storage][registry]") {
  cl::testing::temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  std::optional<std::string> seen_in_transaction;
  store->apply({[&](write_txn& tx) {
    tx.store<note_writes>().put("t1", "tides", "spring");
    seen_in_transaction = tx.store<note_reads>().note("t1", "tides");  // its own write, in the transaction
    return true;
  },
                [](write_txn& tx) {
                  tx.store<note_writes>().put("t1", "winds", "mistral");
                  return false;  // refused: nothing of it stays
                }});
  CHECK(seen_in_transaction == std::string{"spring"});
  CHECK(store->store<note_reads>().note("t1", "tides") == std::string{"spring"});
  CHECK_FALSE(store->store<note_reads>().note("t1", "winds"));
  CHECK_FALSE(store->store<note_reads>().note("t2", "tides"));  // tenant-scoped
}

TEST_CASE("a registered store's table is opened by LMDB and kept across a reopen", "[storage][registry][lmdb]") {
  cl::testing::temp_dir dir;
  {
    auto store = open_lmdb_store(dir.path, 64);
    store->apply({[](write_txn& tx) {
      tx.store<note_writes>().put("t1", "tides", "neap");
      return true;
    }});
  }
  auto store = open_lmdb_store(dir.path, 64);
  CHECK(store->store<note_reads>().note("t1", "tides") == std::string{"neap"});
}
