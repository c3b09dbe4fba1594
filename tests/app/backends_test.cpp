// Storage backends as components found by name (storage/backend.hpp): the registration list, the
// traits the app schedules by, each backend's own configuration section, and what a backend that
// keeps nothing refuses. The app never asks for a backend's name (checked on the source).

#include "app/groups.hpp"
#include "storage/backend.hpp"
#include "storage/postgresql/postgresql_store.hpp"
#include "tests/support/paths.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace cl;

namespace {

std::optional<config::settings> load(std::vector<std::pair<std::string, std::string>> env, std::string* error = nullptr) {
  std::string err;
  auto s = config::load_settings(app::groups().options(), "", env, {}, err);
  if (error) *error = err;
  return s;
}

const storage::backend_entry& entry(const std::string& name) {
  for (const auto& b : storage::backends())
    if (b.name == name) return b;
  FAIL("no backend " << name);
  throw;
}

}  // namespace

TEST_CASE("three backends are registered, LMDB the default, each with the traits the app schedules by", "[app][backend]") {
  REQUIRE(storage::backends().size() == 3);
  CHECK(storage::backends().front().name == "lmdb");
  config::settings fresh;
  CHECK(fresh.storage.backend == storage::backends().front().name);
  const auto& lmdb = entry("lmdb").traits;
  CHECK_FALSE(lmdb.shared);
  CHECK_FALSE(lmdb.reads_block);
  CHECK(lmdb.in_data_dir);
  CHECK(lmdb.format > 0);
  const auto& pg = entry("postgresql").traits;
  CHECK(pg.shared);
  CHECK(pg.reads_block);
  CHECK(pg.trusts_inserts);
  CHECK_FALSE(pg.in_data_dir);
  const auto& memory = entry("memory").traits;
  CHECK_FALSE(memory.shared);
  CHECK_FALSE(memory.in_data_dir);
}

TEST_CASE("storage.backend takes a registered name and refuses another, naming them all", "[app][backend][config]") {
  auto s = load({{"CONTENTLAKE_STORAGE_BACKEND", "memory"}});
  REQUIRE(s);
  CHECK(s->storage.backend == "memory");
  std::string error;
  CHECK_FALSE(load({{"CONTENTLAKE_STORAGE_BACKEND", "oracle"}}, &error));
  CHECK(error.find("storage.backend") != std::string::npos);
  CHECK(error.find("lmdb, postgresql, memory") != std::string::npos);
}

TEST_CASE("a backend's options are its own section: storage.postgresql.* fill the PostgreSQL section", "[app][backend][config]") {
  auto s = load({{"CONTENTLAKE_STORAGE_BACKEND", "postgresql"},
                 {"CONTENTLAKE_STORAGE_POSTGRESQL_URL", "host=/tmp dbname=x"},
                 {"CONTENTLAKE_STORAGE_POSTGRESQL_WRITERS", "3"}});
  REQUIRE(s);
  const auto& section = static_cast<const config::settings&>(*s).groups.get<storage::postgresql_section>();
  CHECK(section.url == "host=/tmp dbname=x");
  CHECK(section.writers == 3);
  auto backend = storage::open_backend(*s);  // nothing connects until a store is opened
  CHECK(backend->writer_lanes() == 3);
  CHECK(backend->described() == "the PostgreSQL database");  // never the connection string
  CHECK_THROWS_AS(backend->backup("/tmp/nowhere", {}), storage::backup_refused);
}

TEST_CASE("a backend refuses a section it cannot run with, saying what to change", "[app][backend]") {
  auto s = load({{"CONTENTLAKE_STORAGE_BACKEND", "postgresql"}});
  REQUIRE(s);
  CHECK_THROWS_WITH(storage::open_backend(*s), Catch::Contains("storage.postgresql.url is not set"));
  auto crowded = load({{"CONTENTLAKE_STORAGE_BACKEND", "postgresql"},
                       {"CONTENTLAKE_STORAGE_POSTGRESQL_URL", "dbname=x"},
                       {"CONTENTLAKE_STORAGE_POSTGRESQL_WRITERS", "8"},
                       {"CONTENTLAKE_STORAGE_POSTGRESQL_POOL_SIZE", "8"}});
  REQUIRE(crowded);
  CHECK_THROWS_WITH(storage::open_backend(*crowded), Catch::Contains("must be below storage.postgresql.pool_size"));
}

TEST_CASE("contentlake migrate's locations: a database URL or connection string names PostgreSQL, anything else a "
          "data dir", "[app][backend]") {
  config::settings base;
  CHECK(storage::located(base, "postgresql://u@h/db").storage.backend == "postgresql");
  CHECK(storage::located(base, "postgres://u@h/db").storage.backend == "postgresql");
  auto keywords = storage::located(base, "host=/run/pg dbname=lake");
  CHECK(keywords.storage.backend == "postgresql");
  CHECK(static_cast<const config::settings&>(keywords).groups.get<storage::postgresql_section>().url
        == "host=/run/pg dbname=lake");
  auto dir = storage::located(base, "/srv/lake/var");
  CHECK(dir.storage.backend == "lmdb");
  CHECK(dir.data_dir == "/srv/lake/var");
}

TEST_CASE("the memory backend keeps records in this process: nothing to read from outside, nothing to back up",
          "[app][backend]") {
  config::settings s;
  s.storage.backend = "memory";
  s.data_dir = "/nonexistent/never-created";
  auto backend = storage::open_backend(s);
  auto records = backend->open_records();
  CHECK(records->probe());
  CHECK_FALSE(std::filesystem::exists(s.data_dir));
  CHECK_THROWS(backend->open_records_to_read());
  CHECK_THROWS_AS(backend->backup("/tmp/nowhere", {}), storage::backup_refused);
  CHECK_THROWS_AS(backend->restore("/tmp/nowhere"), storage::backup_refused);
  CHECK(backend->open_leases() != nullptr);
  CHECK(backend->open_held_slots("n") == nullptr);
  CHECK(backend->status(*records).empty());
}

TEST_CASE("app/ never asks which backend it runs on: no name compared, no backend's folder included",
          "[app][backend][layering]") {
  std::regex by_name{R"re(storage\.backend\s*[!=]=|"(lmdb|postgresql|memory)")re", std::regex::icase};
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator{cl::testing::source_dir() + "/app"}) {
    std::ifstream in{e.path()};
    std::stringstream text;
    text << in.rdbuf();
    auto s = text.str();
    ++files;
    INFO(e.path().filename().string());
    CHECK_FALSE(std::regex_search(s, by_name));
  }
  CHECK(files > 20);
}
