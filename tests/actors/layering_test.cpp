// Storage belongs to storage/: no file under actors/ builds a key, names an LMDB table, or searches
// stored JSON text. Actors read and write through the typed stores (storage/*_store.hpp) only, so
// another backend (PostgreSQL) can stand behind the same actors.

#include "actors/backend_error.hpp"
#include "tests/support/paths.hpp"
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

TEST_CASE("actors/ holds no key layout, no table name and no search in stored JSON", "[layering]") {
  const char* forbidden[] = {
    "storage::table",   // raw tables
    "tenant_key(",      // key layouts
    "big_endian_key(",  //
    "mdb_",             // LMDB itself
    "lmdb",             //
    "find(\"\\\"",      // substring searches for JSON members in stored text
    "find(R\"(",        //
    "record_field(",    // reading stored records by hand
  };
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator{cl::testing::source_dir() + "/actors"}) {
    if (!entry.is_regular_file()) continue;  // the route groups' folders: their files come next
    std::ifstream in{entry.path()};
    std::stringstream text;
    text << in.rdbuf();
    ++files;
    for (const char* pattern : forbidden) {
      INFO(entry.path().filename().string() << " contains " << pattern);
      CHECK(text.str().find(pattern) == std::string::npos);
    }
  }
  CHECK(files > 20);
}

TEST_CASE("the key-value layer is storage's own: nothing above storage/ includes it or names LMDB's store",
          "[layering]") {
  int files = 0;
  for (const char* dir : {"/actors", "/app", "/http", "/domain"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator{cl::testing::source_dir() + dir}) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in{entry.path()};
      std::stringstream text;
      text << in.rdbuf();
      ++files;
      INFO(entry.path().string());
      CHECK(text.str().find("storage/kv/kv.hpp") == std::string::npos);
      CHECK(text.str().find("kv::") == std::string::npos);
      // Only the place that chooses the backend opens it.
      if (entry.path().filename() != "record_stores.cpp" && entry.path().filename() != "main.cpp"
          && entry.path().filename() != "build_info.cpp")
        CHECK(text.str().find("storage/kv/lmdb_store.hpp") == std::string::npos);
    }
  }
  CHECK(files > 60);
}

TEST_CASE("dependencies point one way: actors/ includes nothing of http/, domain/ nothing above it", "[layering]") {
  auto includes_of = [](const char* dir, const char* layer) {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator{cl::testing::source_dir() + dir}) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in{entry.path()};
      std::string line;
      while (std::getline(in, line))
        if (line.rfind("#include \"" + std::string{layer}, 0) == 0) found.push_back(entry.path().filename().string() + ": " + line);
    }
    return found;
  };
  for (const char* layer : {"http/", "app/"}) {
    INFO("actors/ includes " << layer);
    CHECK(includes_of("/actors", layer).empty());
  }
  for (const char* layer : {"http/", "app/", "actors/", "storage/", "config/"}) {
    INFO("domain/ includes " << layer);
    CHECK(includes_of("/domain", layer).empty());
  }
}

TEST_CASE("the route groups added as actors have folders of their own; the core's concern actors stay at actors/",
          "[layering]") {
  auto here = [](const std::string& path) { return std::filesystem::exists(cl::testing::source_dir() + "/" + path); };
  for (const char* file : {"actors/blobs/blob_broker.hpp", "actors/search/search_session.hpp", "actors/search/indexer.hpp",
                           "actors/events/changes_feed.hpp", "actors/events/webhook_dispatcher.hpp",
                           "actors/events/edge_purger.hpp", "actors/mcp/mcp_plans.hpp"})
    CHECK(here(file));
  for (const char* file : {"actors/auth.hpp", "actors/rights.hpp", "actors/access.hpp", "actors/writer.hpp",
                           "actors/reader.hpp", "actors/ledger.hpp", "actors/coordinator.hpp", "actors/supervisor.hpp"})
    CHECK(here(file));
}

TEST_CASE("every concern a plan asks is one contentlake_backend_errors_total shows from the start", "[layering]") {
  // `ask(self, ctx, done, actor, "concern", ...)`: the first string literal after `ask(`.
  std::regex call{R"re(\bask\(\s*self,[^"]*?"([^"]*)")re"};
  int asks = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator{cl::testing::source_dir() + "/actors"}) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in{entry.path()};
    std::stringstream text;
    text << in.rdbuf();
    auto s = text.str();
    for (std::sregex_iterator it{s.begin(), s.end(), call}, end; it != end; ++it) {
      ++asks;
      auto concern = (*it)[1].str();
      INFO(entry.path().filename().string() << " asks concern \"" << concern << "\"");
      CHECK(std::find(std::begin(cl::actors::backend_concerns), std::end(cl::actors::backend_concerns), concern)
            != std::end(cl::actors::backend_concerns));
    }
  }
  CHECK(asks > 20);
}
