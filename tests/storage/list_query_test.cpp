// Typed list queries: the by-principal grant index drives a readable Resource list (several
// principals merged, each id once, in order), filters apply to the record's own members, pages
// resume after an id, and activities are kept per grant.

#include "domain/access.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/raw_lmdb.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"

#include <catch2/catch.hpp>

using namespace cl::storage;
using cl::testing::temp_dir;

namespace {

std::string resource_json(const std::string& id, const std::string& type, bool staged) {
  return R"({"id":")" + id + "\"" + (staged ? "" : R"(,"work_id":"wk_1")") + R"(,"version":"ver_1","title":"T","type":")"
         + type + R"(","language":"en","content":{"format":"cl.content/1","blocks":[{"type":"paragraph","key":"p1",)"
         R"("meta":{"type":"DATASET"},"children":[{"type":"span","text":"x"}]}]}})";
}

/// Stores a Resource through its typed store (header and JSON agree).
void put_resource(write_txn& tx, const std::string& tenant, const std::string& id, const std::string& type, bool staged) {
  tx.resources().put(tenant, id, resource_header{staged ? "" : "wk_1", type, "en", "ver_1", {}}, resource_json(id, type, staged));
}

cl::domain::access_grant grant(const std::string& resource, const std::string& principal,
                               cl::domain::access_role role = cl::domain::access_role::reader) {
  return cl::domain::access_grant{resource, principal, role, "u_admin", "2026-01-01T00:00:00Z"};
}

/// Resources res_00..res_19 of t1 (every third a DATASET, every fourth staged); u_a holds grants on
/// the even ones, g_team on multiples of 3 (so 0, 6, 12, 18 are reachable both ways).
std::shared_ptr<record_store> fixture_store(const std::string& dir) {
  auto store = cl::testing::open_store(dir);
  store->apply({[](write_txn& tx) {
    for (int i = 0; i < 20; ++i) {
      char id[8];
      std::snprintf(id, sizeof id, "res_%02d", i);
      put_resource(tx, "t1", id, i % 3 == 0 ? "DATASET" : "CHAPTER", i % 4 == 0);
      if (i % 2 == 0) tx.grants().put("t1", grant(id, "u_a"));
      if (i % 3 == 0) tx.grants().put("t1", grant(id, "g_team"));
      tx.activities().put("t1", "act_" + std::string{id}, activity_header{id, "CREATION"},
                          R"({"id":"act_)" + std::string{id} + R"(","type":"CREATION","target":{"kind":"resource","id":")" + id
                            + "\"}}");
    }
    tx.activities().put("t1", "act_work", activity_header{"", "CREATION"}, R"({"id":"act_work","type":"CREATION","target":{"kind":"work","id":"wk_1"}})");
    put_resource(tx, "t2", "res_00", "CHAPTER", false);
    tx.grants().put("t2", grant("res_00", "u_a", cl::domain::access_role::owner));
    return true;
  }});
  return store;
}

std::vector<std::string> ids(const record_page& page) {
  std::vector<std::string> out;
  for (const auto& [id, json] : page.entries) out.push_back(id);
  return out;
}

}  // namespace

TEST_CASE("a readable list merges the principals' grant indexes, each id once, in order", "[storage][lists]") {
  temp_dir dir;
  auto store = fixture_store(dir.path);
  resource_query q;
  q.tenant = "t1";
  q.readable_by = {"u_a", "g_team"};
  q.limit = 100;
  auto page = store->resources().list(q);
  CHECK(ids(page) == std::vector<std::string>{"res_00", "res_02", "res_03", "res_04", "res_06", "res_08", "res_09",
                                              "res_10", "res_12", "res_14", "res_15", "res_16", "res_18"});
  CHECK(page.exhausted);
  // Pages resume after an id; another tenant's grants never count.
  q.limit = 4;
  q.after = "res_04";
  CHECK(ids(store->resources().list(q)) == std::vector<std::string>{"res_06", "res_08", "res_09", "res_10"});
  q.tenant = "t2";
  q.after.clear();
  CHECK(ids(store->resources().list(q)) == std::vector<std::string>{"res_00"});
  q.readable_by = {"u_nobody"};
  CHECK(store->resources().list(q).entries.empty());
}

TEST_CASE("records_of answers the records and headers of many Resources at once, as a read of each would",
          "[storage][lists]") {
  temp_dir dir;
  auto store = fixture_store(dir.path);
  auto found = store->resources().records_of("t1", {"res_03", "res_00", "res_missing"});
  REQUIRE(found.size() == 2);
  for (const auto& id : {"res_00", "res_03"}) {
    CHECK(found.at(id).first == *store->resources().get("t1", id));
    auto h = *store->resources().header("t1", id);
    CHECK(found.at(id).second.type == h.type);
    CHECK(found.at(id).second.work_id == h.work_id);
    CHECK(found.at(id).second.version == h.version);
  }
  // Per tenant: t2 has its own res_00 (a CHAPTER; t1's is a DATASET) and no res_03.
  auto other = store->resources().records_of("t2", {"res_00", "res_03"});
  REQUIRE(other.size() == 1);
  CHECK(other.at("res_00").second.type == "CHAPTER");
  CHECK(found.at("res_00").second.type == "DATASET");
}

TEST_CASE("list filters read the record's own members, never its content", "[storage][lists]") {
  temp_dir dir;
  auto store = fixture_store(dir.path);
  resource_query q;
  q.tenant = "t1";
  q.readable_by = {"u_a"};
  q.type = "DATASET";  // every record's content has a member "type":"DATASET" too
  q.limit = 100;
  CHECK(ids(store->resources().list(q)) == std::vector<std::string>{"res_00", "res_06", "res_12", "res_18"});
  q.type.clear();
  q.staged = true;
  CHECK(ids(store->resources().list(q)) == std::vector<std::string>{"res_00", "res_04", "res_08", "res_12", "res_16"});
  // A budget bounds what one page examines: the page says where it stopped.
  q.staged.reset();
  q.type = "DATASET";
  q.budget = 3;
  auto bounded = store->resources().list(q);
  CHECK(ids(bounded) == std::vector<std::string>{"res_00"});
  CHECK(bounded.resume_after == "res_04");
  CHECK_FALSE(bounded.exhausted);
}

TEST_CASE("activities about Resources are listed only through a grant of one of the principals", "[storage][lists]") {
  temp_dir dir;
  auto store = fixture_store(dir.path);
  activity_query q;
  q.tenant = "t1";
  q.readable_by = {"g_team"};
  q.limit = 100;
  auto page = store->activities().list(q);
  CHECK(ids(page) == std::vector<std::string>{"act_res_00", "act_res_03", "act_res_06", "act_res_09", "act_res_12",
                                              "act_res_15", "act_res_18", "act_work"});
  q.resource_id = "res_03";
  CHECK(ids(store->activities().list(q)) == std::vector<std::string>{"act_res_03"});
  q.resource_id = "res_02";  // not readable through g_team
  CHECK(store->activities().list(q).entries.empty());
}

TEST_CASE("a format-2 data dir gets its Activities indexed by Resource at open", "[storage][lists][migration][lmdb]") {
  temp_dir dir;
  { cl::storage::open_lmdb_store(dir.path, 64); }
  cl::testing::write_raw_lmdb(dir.path, [](const auto& put_raw) {
    put_raw("activities", cl::storage::kv::tenant_key("t1", "act_1"), R"({"id":"act_1","type":"CREATION","target":{"kind":"resource","id":"res_9"}})");
    put_raw("activities", cl::storage::kv::tenant_key("t1", "act_2"), R"({"id":"act_2","type":"CREATION","target":{"kind":"work","id":"wk_1"}})");
    put_raw("meta", "format_version", "2");
  });
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  activity_query q;
  q.tenant = "t1";
  q.resource_id = "res_9";
  CHECK(ids(store->activities().list(q)) == std::vector<std::string>{"act_1"});
  CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("activities_by_resource")) == 1);
}

TEST_CASE("a format-3 data dir gets typed headers at open: lists filter the same, reads return the same bytes",
          "[storage][lists][migration][lmdb]") {
  temp_dir dir;
  { cl::storage::open_lmdb_store(dir.path, 64); }
  auto chapter = resource_json("res_1", "CHAPTER", false);
  auto staged = resource_json("res_2", "DATASET", true);
  auto activity = std::string{R"({"id":"act_1","type":"UPDATE","target":{"kind":"resource","id":"res_1"}})"};
  cl::testing::write_raw_lmdb(dir.path, [&](const auto& put_raw) {
    put_raw("resources", cl::storage::kv::tenant_key("t1", "res_1"), chapter);
    put_raw("resources", cl::storage::kv::tenant_key("t1", "res_2"), staged);
    put_raw("activities", cl::storage::kv::tenant_key("t1", "act_1"), activity);
    put_raw("activities_by_resource", cl::storage::kv::tenant_key("t1", std::string{"res_1"} + '\0' + "act_1"), "");
    put_raw("meta", "format_version", "3");
  });
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  CHECK(store->resources().get("t1", "res_1") == chapter);
  CHECK(store->activities().get("t1", "act_1") == activity);
  CHECK(store->resources().header("t1", "res_2") == resource_header{"", "DATASET", "en", "ver_1", {}});
  resource_query q;
  q.tenant = "t1";
  q.type = "CHAPTER";
  auto page = store->resources().list(q);
  REQUIRE(ids(page) == std::vector<std::string>{"res_1"});
  CHECK(page.entries[0].second == chapter);
  q.type.clear();
  q.staged = true;
  CHECK(ids(store->resources().list(q)) == std::vector<std::string>{"res_2"});
  activity_query a;
  a.tenant = "t1";
  a.type = "UPDATE";
  CHECK(ids(store->activities().list(a)) == std::vector<std::string>{"act_1"});
  a.type = "CREATION";
  CHECK(store->activities().list(a).entries.empty());
  // Format 6: the by-Work index, built from the headers.
  resource_query w;
  w.tenant = "t1";
  w.work_id = "wk_1";
  CHECK(ids(store->resources().list(w)) == std::vector<std::string>{"res_1"});
  CHECK(cl::storage::kv::engine_of(*store).entries(cl::testing::raw("resources_by_work")) == 1);
}

TEST_CASE("a Resource's typed header follows it through create, replace and promotion", "[storage][lists]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto by = [&](const std::string& type, std::optional<bool> staged) {
    resource_query q;
    q.tenant = "t1";
    q.type = type;
    q.staged = staged;
    return ids(store->resources().list(q));
  };
  auto put = [&](const std::string& type, bool is_staged, const std::string& version) {
    store->apply({[&](write_txn& tx) {
      tx.resources().put("t1", "res_1", resource_header{is_staged ? "" : "wk_1", type, "en", version, {}},
                         resource_json("res_1", type, is_staged));
      return true;
    }});
  };
  put("CHAPTER", true, "ver_1");  // create, staged
  CHECK(by("CHAPTER", true) == std::vector<std::string>{"res_1"});
  put("DATASET", true, "ver_2");  // replace: the old type is no longer found
  CHECK(by("CHAPTER", std::nullopt).empty());
  CHECK(by("DATASET", true) == std::vector<std::string>{"res_1"});
  put("DATASET", false, "ver_2");  // promotion: attached, no longer staged
  CHECK(by("DATASET", true).empty());
  CHECK(by("DATASET", false) == std::vector<std::string>{"res_1"});
  CHECK(store->resources().header("t1", "res_1")->work_id == "wk_1");
  CHECK_FALSE(store->resources().header("t1", "res_none"));
  // The by-Work index follows the promotion; a reader's grants filter it.
  resource_query w;
  w.tenant = "t1";
  w.work_id = "wk_1";
  CHECK(ids(store->resources().list(w)) == std::vector<std::string>{"res_1"});
  w.readable_by = {"u_nobody"};
  CHECK(ids(store->resources().list(w)).empty());
  w.work_id = "wk_2";
  w.readable_by.clear();
  CHECK(ids(store->resources().list(w)).empty());
}

TEST_CASE("the blob-to-Resource index follows each Resource's current content", "[storage][blobs]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  auto put = [&](const std::string& id, std::vector<std::string> blobs) {
    store->apply({[&](write_txn& tx) {
      tx.resources().put("t1", id, resource_header{"", "CHAPTER", "en", "ver_1", blobs}, resource_json(id, "CHAPTER", true));
      return true;
    }});
  };
  put("res_a", {"blb_1", "blb_2"});
  put("res_b", {"blb_1"});
  CHECK(store->resources().referencing("t1", "blb_1", "", 10) == std::vector<std::string>{"res_a", "res_b"});
  CHECK(store->resources().referencing("t1", "blb_1", "res_a", 10) == std::vector<std::string>{"res_b"});
  CHECK(store->resources().referencing("t2", "blb_1", "", 10).empty());
  put("res_a", {"blb_2", "blb_3"});  // a replacement drops blb_1 and adds blb_3
  CHECK(store->resources().referencing("t1", "blb_1", "", 10) == std::vector<std::string>{"res_b"});
  CHECK(store->resources().referencing("t1", "blb_3", "", 10) == std::vector<std::string>{"res_a"});
  CHECK(store->resources().header("t1", "res_a")->blobs == std::vector<std::string>{"blb_2", "blb_3"});
  put("res_b", {});
  CHECK(store->resources().referencing("t1", "blb_1", "", 10).empty());
  CHECK(store->resources().referencing("t1", "blb_2", "", 10) == std::vector<std::string>{"res_a"});
  CHECK(store->resources().referencing("t1", "blb_3", "", 10) == std::vector<std::string>{"res_a"});
}

TEST_CASE("the format 3 -> 4 migration indexes the blobs a Resource's images reference", "[storage][blobs][migration][lmdb]") {
  temp_dir dir;
  { cl::storage::open_lmdb_store(dir.path, 64); }
  std::string with_image =
    R"({"id":"res_1","version":"ver_1","title":"T","type":"CHAPTER","language":"en","content":{"format":"cl.content/1",)"
    R"("blocks":[{"type":"image","key":"i1","blob":"blb_9","alt":"a map"},{"type":"image","key":"i2","blob":"blb_9","alt":"again"}]}})";
  cl::testing::write_raw_lmdb(dir.path, [&](const auto& put_raw) {
    put_raw("resources", cl::storage::kv::tenant_key("t1", "res_1"), with_image);
    put_raw("meta", "format_version", "3");
  });
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  CHECK(store->resources().referencing("t1", "blb_9", "", 10) == std::vector<std::string>{"res_1"});
  CHECK(store->resources().header("t1", "res_1")->blobs == std::vector<std::string>{"blb_9"});
  CHECK(store->resources().get("t1", "res_1") == with_image);
}

TEST_CASE("a page of Activities costs the page, however many Activities the caller may not read come first",
          "[storage][lists]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  // 1,000 Activities of another's Resource come first in id order; then 10 of the caller's.
  store->apply({[](write_txn& tx) {
    put_resource(tx, "t1", "res_other", "CHAPTER", false);
    put_resource(tx, "t1", "res_mine", "CHAPTER", false);
    tx.grants().put("t1", grant("res_other", "u_other"));
    for (int i = 0; i < 1000; ++i) {
      char id[16];
      std::snprintf(id, sizeof id, "act_a%04d", i);
      tx.activities().put("t1", id, activity_header{"res_other", "UPDATE"}, "{\"id\":\"" + std::string{id} + "\"}");
    }
    for (int i = 0; i < 10; ++i) {
      char id[16];
      std::snprintf(id, sizeof id, "act_b%04d", i);
      tx.activities().put("t1", id, activity_header{"res_mine", "UPDATE"}, "{\"id\":\"" + std::string{id} + "\"}");
    }
    return true;
  }});
  activity_query q;
  q.tenant = "t1";
  q.readable_by = {"u_me"};
  q.limit = 5;
  CHECK(store->activities().list(q).entries.empty());  // no grant yet: nothing, and nothing walked
  CHECK(store->activities().list(q).examined == 0);
  // A grant given after the Activities were stored brings them into the caller's list.
  store->apply({[](write_txn& tx) {
    tx.grants().put("t1", grant("res_mine", "u_me"));
    return true;
  }});
  auto page = store->activities().list(q);
  CHECK(ids(page) == std::vector<std::string>{"act_b0000", "act_b0001", "act_b0002", "act_b0003", "act_b0004"});
  CHECK(page.examined == 5);  // not the 1,000 before them
  q.after = page.resume_after;
  CHECK(ids(store->activities().list(q)) == std::vector<std::string>{"act_b0005", "act_b0006", "act_b0007", "act_b0008", "act_b0009"});
  // A role change keeps them; a revocation takes them away; an Activity about no Resource is everyone's.
  store->apply({[](write_txn& tx) {
    tx.grants().put("t1", grant("res_mine", "u_me", cl::domain::access_role::writer));
    tx.activities().put("t1", "act_c_work", activity_header{"", "CREATION"}, R"({"id":"act_c_work"})");
    return true;
  }});
  q.after.clear();
  q.limit = 100;
  CHECK(store->activities().list(q).entries.size() == 11);
  store->apply({[](write_txn& tx) {
    tx.grants().erase("t1", "res_mine", "u_me");
    return true;
  }});
  CHECK(ids(store->activities().list(q)) == std::vector<std::string>{"act_c_work"});
  // The other reader still sees its 1,000 and the Work's.
  q.readable_by = {"u_other"};
  q.limit = 2000;
  CHECK(store->activities().list(q).entries.size() == 1001);
}

TEST_CASE("a format-7 data dir gets its Activities indexed by reader at open", "[storage][lists][migration][lmdb]") {
  temp_dir dir;
  { cl::storage::open_lmdb_store(dir.path, 64); }
  cl::testing::write_raw_lmdb(dir.path, [](const auto& put_raw) {
    using cl::storage::kv::tenant_key;
    // As format 7 stored them: with their typed header (format 4), indexed by Resource (format 3).
    put_raw("activities", tenant_key("t1", "act_1"),
            encode_activity(activity_header{"res_9", "CREATION"},
                            R"({"id":"act_1","type":"CREATION","target":{"kind":"resource","id":"res_9"}})"));
    put_raw("activities", tenant_key("t1", "act_2"),
            encode_activity(activity_header{"", "CREATION"},
                            R"({"id":"act_2","type":"CREATION","target":{"kind":"work","id":"wk_1"}})"));
    put_raw("activities_by_resource", tenant_key("t1", std::string{"res_9"} + '\0' + "act_1"), "");
    put_raw("grants", tenant_key("t1", std::string{"res_9"} + '\0' + "u_a"), R"({"principal":"u_a"})");
    put_raw("grants_by_principal", tenant_key("t1", std::string{"u_a"} + '\0' + "res_9"), "reader");
    put_raw("meta", "format_version", "7");
  });
  auto store = cl::storage::open_lmdb_store(dir.path, 64);
  activity_query q;
  q.tenant = "t1";
  q.readable_by = {"u_a"};
  CHECK(ids(store->activities().list(q)) == std::vector<std::string>{"act_1", "act_2"});
  q.readable_by = {"u_b"};
  CHECK(ids(store->activities().list(q)) == std::vector<std::string>{"act_2"});
}

TEST_CASE("works_of answers the Work of many Resources at once, those that exist", "[storage][lists]") {
  temp_dir dir;
  auto store = cl::testing::open_store(dir.path);
  store->apply({[](write_txn& tx) {
    tx.resources().put("t1", "res_a", resource_header{"wk_1", "CHAPTER", "en", "ver_1", {}}, resource_json("res_a", "CHAPTER", false));
    tx.resources().put("t1", "res_b", resource_header{"", "CHAPTER", "en", "ver_1", {}}, resource_json("res_b", "CHAPTER", true));
    return true;
  }});
  auto works = store->resources().works_of("t1", {"res_a", "res_b", "res_gone", "res_a"});
  CHECK(works == std::map<std::string, std::string>{{"res_a", "wk_1"}, {"res_b", ""}});
  CHECK(store->resources().works_of("t2", {"res_a"}).empty());
  CHECK(store->resources().works_of("t1", {}).empty());
}

namespace {

/// The schema a URL of `fresh_postgresql_url` puts its tables in.
std::string schema_of(const std::string& url) {
  auto schema = url.substr(url.rfind("search_path=") + 12);
  schema.pop_back();  // the closing quote
  return schema;
}

/// The index and table rows that the statements run in `schema` read, once the server's statistics
/// count at least `statements` scans there (the store's connection has closed, so its counters
/// reach them).
std::int64_t rows_read(const std::string& schema, int statements) {
  cl::storage::pg::connection admin{cl::testing::test_postgresql_url()};
  auto count = [&](const char* sql) { return admin.run({sql}, {schema}).integer(0, 0); };
  REQUIRE(cl::testing::eventually(
    [&] {
      return count("SELECT coalesce(sum(idx_scan + seq_scan), 0) FROM pg_stat_user_tables WHERE schemaname = $1")
             >= statements;
    },
    10000));
  return count("SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE schemaname = $1")
         + count("SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables WHERE schemaname = $1");
}

/// A store on `url` with one connection (every statement on the same plans) and no hot-record
/// cache (every read a statement): what the plan tests count.
std::shared_ptr<record_store> one_connection_store(const std::string& url, std::size_t replan_after = 1000) {
  postgresql_settings settings{url, {}, 1};
  settings.cache_bytes = 0;
  settings.replan_after = replan_after;
  return open_postgresql_store(settings);
}

}  // namespace

TEST_CASE("a statement planned while the tables were tiny is planned again once they have grown",
          "[storage][lists][postgresql]") {
  // PostgreSQL keeps a prepared statement's plan until a table's statistics change, and autovacuum
  // analyzes at most once a minute. A plan made while a new database was tiny may walk every row of
  // the tenant (an index scan on the tenant alone, filtering; a nested loop over it): free on a
  // tiny table, a tenant-wide read per page once the tables have grown. Each connection prepares a
  // statement again after `replan_after` uses (1,000 by default; 10 here). The tables grow by
  // 3,000 rows of the tenant after the plans were made; 100 pages follow. Had the first plans been
  // kept, each page would read at least 3,000 rows (300,000 in all); planned again, a few pages
  // read the tenant before their statements are retired, the rest read their own rows only.
  auto url = cl::testing::fresh_postgresql_url();
  auto schema = schema_of(url);
  int statements = 0;
  {
    auto store = one_connection_store(url, 10);
    store->apply({[](write_txn& tx) {
      put_resource(tx, "t1", "res_a", "CHAPTER", false);
      tx.grants().put("t1", grant("res_a", "u_a"));
      tx.activities().put("t1", "act_a", activity_header{"res_a", "CREATION"}, R"({"id":"act_a"})");
      return true;
    }});
    auto pages = [&] {
      grant_query g;
      g.tenant = "t1";
      g.resource_id = "res_a";
      CHECK(store->grants().on_resource(g).entries.size() == 1);
      resource_query by_work;
      by_work.tenant = "t1";
      by_work.work_id = "wk_1";
      CHECK(store->resources().list(by_work).entries.size() == 1);
      resource_query by_principal;
      by_principal.tenant = "t1";
      by_principal.readable_by = {"u_a"};
      CHECK(store->resources().list(by_principal).entries.size() == 1);
      activity_query about;
      about.tenant = "t1";
      about.resource_id = "res_a";
      CHECK(store->activities().list(about).entries.size() == 1);
      statements += 4;  // at least
    };
    for (int i = 0; i < 8; ++i) pages();  // past the five custom plans: generic plans are kept
    cl::storage::pg::connection admin{url};
    admin.exec(
      "INSERT INTO resources SELECT 't1', 'res_b' || i, 'wk_2', 'CHAPTER', 'en', 'ver_1', '{}', '{}' "
      "FROM generate_series(1, 3000) i;"
      "INSERT INTO grants SELECT 't1', 'res_b' || i, 'u_b', 'reader', '{}' FROM generate_series(1, 3000) i;"
      "INSERT INTO activities SELECT 't1', 'act_b' || i, 'res_b' || i, 'CREATION', '{}' FROM generate_series(1, 3000) i");
    for (int i = 0; i < 100; ++i) pages();
  }
  auto read = rows_read(schema, statements);
  INFO("index and table rows read: " << read);
  CHECK(read < 100000);
}

TEST_CASE("a tenant the statistics have not seen yet is paged along its index, not by a walk of the tenant",
          "[storage][lists][postgresql]") {
  // A tenant absent from the statistics (new since the last ANALYZE) is estimated at a row or two.
  // A join of a tenant's grants to its Resources, or a look-up of a page's records by `id = ANY`,
  // then looks as cheap with the index bound by the tenant alone and the rest left as a filter: a
  // walk of the tenant per page. Both are written so every row is looked up by its whole key.
  auto url = cl::testing::fresh_postgresql_url();
  auto schema = schema_of(url);
  int statements = 0;
  {
    auto store = one_connection_store(url);
    cl::storage::pg::connection admin{url};
    admin.exec(
      "INSERT INTO resources SELECT 't_old', 'res_' || i, '', 'CHAPTER', 'en', 'ver_1', '{}', '{}' "
      "FROM generate_series(1, 3000) i;"
      "INSERT INTO grants SELECT 't_old', 'res_' || i, 'u_a', 'reader', '{}' FROM generate_series(1, 3000) i;"
      "INSERT INTO activities SELECT 't_old', 'act_' || i, '', 'CREATION', '{}' FROM generate_series(1, 3000) i;"
      "INSERT INTO activity_readers SELECT 't_old', 'u_a', 'act_' || i FROM generate_series(1, 3000) i;"
      "ANALYZE;"
      "INSERT INTO resources SELECT 't_new', 'res_' || i, '', 'CHAPTER', 'en', 'ver_1', '{}', '{}' "
      "FROM generate_series(1, 5000) i;"
      "INSERT INTO grants SELECT 't_new', 'res_' || i, 'u_a', 'reader', '{}' FROM generate_series(1, 5000) i;"
      "INSERT INTO activities SELECT 't_new', 'act_' || i, '', 'CREATION', '{}' FROM generate_series(1, 5000) i;"
      "INSERT INTO activity_readers SELECT 't_new', 'u_a', 'act_' || i FROM generate_series(1, 5000) i");
    for (int i = 0; i < 30; ++i) {
      resource_query by_principal;
      by_principal.tenant = "t_new";
      by_principal.readable_by = {"u_a"};
      by_principal.limit = 50;
      CHECK(store->resources().list(by_principal).entries.size() == 50);
      activity_query readable;
      readable.tenant = "t_new";
      readable.readable_by = {"u_a"};
      readable.limit = 50;
      CHECK(store->activities().list(readable).entries.size() == 50);
      statements += 2;
    }
  }
  // Along the index: 60 pages of about 50 rows, 50 look-ups and 50 records each (9,121 rows read in
  // all when measured). With a walk of the tenant's 5,000 rows per page: 382,621 (the plain joins
  // and `id = ANY($2)` look-ups), 306,121 (the joins fixed, the look-ups not).
  auto read = rows_read(schema, statements);
  INFO("index and table rows read: " << read);
  CHECK(read < 60000);
}

TEST_CASE("a Resource's write looks up only its own blob references, however many the tenant holds",
          "[storage][blobs][postgresql]") {
  // The blob index is by (tenant, blob, Resource): the references a write drops are looked up by
  // their whole key, from the Resource's row as it was. Looked up by the Resource alone, every write
  // read every reference of the table (20,000 here, per write).
  auto url = cl::testing::fresh_postgresql_url();
  auto schema = schema_of(url);
  int statements = 0;
  {
    auto store = one_connection_store(url);
    cl::storage::pg::connection admin{url};
    admin.exec("INSERT INTO resource_blobs SELECT 't1', 'blb_' || i, 'res_' || i FROM generate_series(1, 20000) i; ANALYZE");
    for (int i = 0; i < 30; ++i) {
      store->apply({[i](write_txn& tx) {
        resource_header h;
        h.blobs = {"blb_kept", "blb_x" + std::to_string(i)};
        tx.resources().put("t1", "res_x", h, "{}");
        return true;
      }});
      statements += 3;
    }
    CHECK(store->resources().referencing("t1", "blb_kept", "", 10) == std::vector<std::string>{"res_x"});
    CHECK(store->resources().referencing("t1", "blb_x28", "", 10).empty());
    CHECK(store->resources().referencing("t1", "blb_x29", "", 10) == std::vector<std::string>{"res_x"});
    CHECK(store->resources().referencing("t1", "blb_7", "", 10) == std::vector<std::string>{"res_7"});
  }
  auto read = rows_read(schema, statements);
  INFO("index and table rows read: " << read);
  CHECK(read < 20000);
}
