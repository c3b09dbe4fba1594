// A typed store added the way a route group adds one: its reads and writes, its table and its
// implementation for each backend all in one new file, registered from there. Nothing in storage/
// names it, and it works on every backend, inside the writer's transaction and in the store's views.

#include "storage/kv/kv.hpp"
#include "storage/postgresql/backend.hpp"
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

const bool implemented = kv::implement<note_writes, kv_note_store>();

// ... and its PostgreSQL implementation, with its table as a schema part of its own.
const bool notes_schema = pg::schema_part("test_notes", {R"sql(
CREATE TABLE test_notes (tenant text COLLATE "C" NOT NULL, topic text COLLATE "C" NOT NULL, text text NOT NULL,
  PRIMARY KEY (tenant, topic));
)sql"});

class pg_note_store final : public note_writes {
public:
  explicit pg_note_store(const pg::context& c) : db_(c.db) {}
  std::optional<std::string> note(std::string_view tenant, std::string_view topic) const override {
    static const pg::statement get{"SELECT text FROM test_notes WHERE tenant = $1 AND topic = $2"};
    auto r = db_.run(get, {tenant, topic});
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }
  void put(std::string_view tenant, std::string_view topic, std::string_view text) override {
    static const pg::statement put{
      "INSERT INTO test_notes (tenant, topic, text) VALUES ($1, $2, $3) "
      "ON CONFLICT (tenant, topic) DO UPDATE SET text = EXCLUDED.text"};
    db_.run(put, {tenant, topic, text});
  }

private:
  const pg::session& db_;
};

const bool implemented_pg = pg::implement<note_writes, pg_note_store>();

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
