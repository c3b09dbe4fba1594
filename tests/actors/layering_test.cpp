// Storage belongs to storage/: no file under actors/ builds a key, names an LMDB table, or searches
// stored JSON text. Actors read and write through the typed stores (storage/*_store.hpp) only, so
// another backend (PostgreSQL) can stand behind the same actors.

#include "actors/backend_error.hpp"
#include "tests/support/paths.hpp"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <regex>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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

namespace {

/// A source file's project includes (`#include "folder/..."`), lower-cased: a folder spelled
/// `Storage/KV/` is the same folder on a case-insensitive file system.
std::vector<std::string> project_includes(const std::filesystem::path& file) {
  std::vector<std::string> out;
  std::ifstream in{file};
  std::string line;
  std::regex include{R"re(^\s*#\s*include\s*"([^"]+)")re"};
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, include)) {
      auto path = m[1].str();
      std::transform(path.begin(), path.end(), path.begin(), [](unsigned char c) { return std::tolower(c); });
      out.push_back(path);
    }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/// The folder rules: for files under `folder` (relative to the source root), the include prefixes
/// allowed, and those refused among them (a backend's folder inside storage/).
struct folder_rule {
  std::string folder;
  std::vector<std::string> allowed;
  std::vector<std::string> refused;
};

const std::vector<std::string> backend_folders{"storage/kv/", "storage/postgresql/"};

std::vector<folder_rule> folder_rules() {
  std::vector<std::string> above_storage{"domain/", "config/", "storage/"};
  auto plus = [](std::vector<std::string> v, std::vector<std::string> more) {
    v.insert(v.end(), more.begin(), more.end());
    return v;
  };
  // The most specific folder first: a file takes the first rule whose folder it is under.
  return {
    {"storage/kv/", {"domain/", "config/", "storage/"}, {"storage/postgresql/"}},
    {"storage/postgresql/", {"domain/", "config/", "storage/"}, {"storage/kv/"}},
    {"storage/", {"domain/", "config/", "storage/"}, backend_folders},
    {"domain/", {"domain/"}, {}},
    {"config/", {"domain/", "config/"}, {}},
    {"actors/", plus(above_storage, {"actors/"}), backend_folders},
    {"http/", plus(above_storage, {"actors/", "http/"}), backend_folders},
    {"app/", plus(above_storage, {"actors/", "http/", "app/"}), backend_folders},
  };
}

}  // namespace

TEST_CASE("every folder includes only what lies below it; nothing above storage/ knows a backend's folder, and the "
          "backends do not know each other",
          "[layering]") {
  namespace fs = std::filesystem;
  auto root = fs::path{cl::testing::source_dir()};
  auto rules = folder_rules();
  int files = 0;
  for (const char* top : {"domain", "config", "storage", "actors", "http", "app"})
    for (const auto& entry : fs::recursive_directory_iterator{root / top}) {
      if (!entry.is_regular_file()) continue;
      auto ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp") continue;
      auto relative = fs::relative(entry.path(), root).generic_string();
      std::transform(relative.begin(), relative.end(), relative.begin(), [](unsigned char c) { return std::tolower(c); });
      const folder_rule* rule = nullptr;
      for (const auto& r : rules)
        if (starts_with(relative, r.folder)) {
          rule = &r;
          break;
        }
      REQUIRE(rule != nullptr);
      ++files;
      for (const auto& inc : project_includes(entry.path())) {
        if (inc.find('/') == std::string::npos) continue;  // a generated header beside the file
        bool allowed = false;
        for (const auto& a : rule->allowed) allowed = allowed || starts_with(inc, a);
        for (const auto& r : rule->refused) allowed = allowed && !starts_with(inc, r);
        INFO(relative << " includes " << inc);
        CHECK(allowed);
      }
    }
  CHECK(files > 300);
}

TEST_CASE("the layering check itself refuses what it should: an include spelled in capitals, a backend's folder "
          "from above, a backend from another, http/ from storage/",
          "[layering]") {
  auto rules = folder_rules();
  auto allowed = [&](const std::string& file, std::string inc) {
    std::transform(inc.begin(), inc.end(), inc.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const auto& r : rules)
      if (starts_with(file, r.folder)) {
        bool ok = false;
        for (const auto& a : r.allowed) ok = ok || starts_with(inc, a);
        for (const auto& x : r.refused) ok = ok && !starts_with(inc, x);
        return ok;
      }
    return false;
  };
  CHECK_FALSE(allowed("app/service.cpp", "Storage/PostgreSQL/postgresql_store.hpp"));
  CHECK_FALSE(allowed("actors/reader.cpp", "storage/kv/kv.hpp"));
  CHECK_FALSE(allowed("storage/kv/lmdb_store.cpp", "storage/postgresql/connection.hpp"));
  CHECK_FALSE(allowed("storage/postgresql/schema.cpp", "storage/kv/codecs.hpp"));
  CHECK_FALSE(allowed("storage/record_store.cpp", "actors/writer.hpp"));
  CHECK_FALSE(allowed("storage/search/index.cpp", "storage/kv/kv.hpp"));
  CHECK_FALSE(allowed("http/session.cpp", "app/service.hpp"));
  CHECK_FALSE(allowed("domain/rights.cpp", "config/settings.hpp"));
  CHECK(allowed("app/service.cpp", "storage/backend.hpp"));
  CHECK(allowed("storage/kv/lmdb_backend.cpp", "storage/backend.hpp"));
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
  // `ask(run, actor, "concern", ...)`: the first string literal after `ask(`.
  std::regex call{R"re(\bask\(\s*run,[^"]*?"([^"]*)")re"};
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

namespace {

/// What a system header needs linked: the imported target that provides it.
const std::vector<std::pair<std::string, std::string>> system_headers{
  {"<lmdb.h>", "PkgConfig::LMDB"},       {"<libpq-fe.h>", "PkgConfig::LIBPQ"},
  {"<xapian.h>", "PkgConfig::XAPIAN"},   {"<caf/", "CAF::core"},
  {"<openssl/", "OpenSSL::Crypto"},       {"<boost/json", "Boost::json"},
  {"<spdlog/", "spdlog::spdlog"},         {"<prometheus/", "prometheus-cpp::core"},
};

struct cmake_library {
  std::vector<std::string> sources;
  std::set<std::string> direct;   ///< imported targets it links itself
  std::set<std::string> exposed;  ///< imported targets it passes on (PUBLIC, INTERFACE)
  std::vector<std::string> deps, public_deps;  ///< our libraries it links
};

/// The libraries of the top CMakeLists.txt: sources and links.
std::map<std::string, cmake_library> cmake_libraries(const std::string& root) {
  std::ifstream in{root + "/CMakeLists.txt"};
  std::stringstream text;
  text << in.rdbuf();
  auto s = text.str();
  std::map<std::string, cmake_library> libs;
  std::regex add{R"re(add_library\((cl_\w+)\s+(STATIC|INTERFACE)([^)]*)\))re"};
  for (std::sregex_iterator it{s.begin(), s.end(), add}, end; it != end; ++it) {
    auto& lib = libs[(*it)[1].str()];
    std::stringstream files{(*it)[3].str()};
    for (std::string f; files >> f;)
      if (f.size() > 4 && f.compare(f.size() - 4, 4, ".cpp") == 0) lib.sources.push_back(f);
  }
  std::regex link{R"re(target_link_libraries\((cl_\w+)([^)]*)\))re"};
  std::regex our{R"re((cl_\w+))re"};
  for (std::sregex_iterator it{s.begin(), s.end(), link}, end; it != end; ++it) {
    auto& lib = libs[(*it)[1].str()];
    std::stringstream items{(*it)[2].str()};
    std::string mode = "PUBLIC";
    for (std::string item; items >> item;) {
      if (item == "PUBLIC" || item == "PRIVATE" || item == "INTERFACE") {
        mode = item;
        continue;
      }
      std::smatch m;
      if (std::regex_search(item, m, our)) {
        lib.deps.push_back(m[1].str());
        if (mode != "PRIVATE") lib.public_deps.push_back(m[1].str());
      } else if (item.find("::") != std::string::npos) {
        lib.direct.insert(item);
        if (mode != "PRIVATE") lib.exposed.insert(item);
      }
    }
  }
  return libs;
}

/// The imported targets `lib` can use: its own links and what its libraries pass on.
std::set<std::string> usable(const std::map<std::string, cmake_library>& libs, const std::string& lib) {
  std::set<std::string> out = libs.at(lib).direct;
  std::vector<std::string> todo = libs.at(lib).deps;
  std::set<std::string> seen;
  while (!todo.empty()) {
    auto d = todo.back();
    todo.pop_back();
    if (!seen.insert(d).second || !libs.count(d)) continue;
    out.insert(libs.at(d).exposed.begin(), libs.at(d).exposed.end());
    todo.insert(todo.end(), libs.at(d).public_deps.begin(), libs.at(d).public_deps.end());
  }
  if (out.count("OpenSSL::SSL")) out.insert("OpenSSL::Crypto");
  return out;
}

/// The imported targets a source file needs: the system headers it reaches through our headers.
std::set<std::string> needed(const std::string& root, const std::string& file,
                             std::map<std::string, std::set<std::string>>& memo) {
  if (auto it = memo.find(file); it != memo.end()) return it->second;
  memo[file] = {};  // a cycle ends here
  std::set<std::string> out;
  std::ifstream in{root + "/" + file};
  std::regex ours{R"re(^\s*#\s*include\s*"([^"]+)")re"}, system{R"re(^\s*#\s*include\s*(<[^>]+>))re"};
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, ours) && std::filesystem::exists(root + "/" + m[1].str())) {
      auto more = needed(root, m[1].str(), memo);
      out.insert(more.begin(), more.end());
    } else if (std::regex_search(line, m, system)) {
      for (const auto& [header, target] : system_headers)
        if (m[1].str().rfind(header, 0) == 0) out.insert(target);
    }
  }
  return memo[file] = out;
}

}  // namespace

TEST_CASE("each library links what its sources include, and links no system library none of them includes",
          "[layering]") {
  auto root = cl::testing::source_dir();
  auto libs = cmake_libraries(root);
  REQUIRE(libs.count("cl_storage"));
  REQUIRE(libs.count("cl_storage_pg"));
  std::map<std::string, std::set<std::string>> memo;
  for (const auto& [name, lib] : libs) {
    std::set<std::string> wants;
    for (const auto& src : lib.sources) {
      auto n = needed(root, src, memo);
      auto can = usable(libs, name);
      for (const auto& t : n) {
        INFO(name << ": " << src << " includes a header of " << t);
        CHECK(can.count(t));
      }
      wants.insert(n.begin(), n.end());
    }
    for (const auto& t : lib.direct) {
      if (t.rfind("PkgConfig::", 0) != 0 && t != "CAF::core" && t != "prometheus-cpp::core") continue;
      INFO(name << " links " << t << " but none of its sources includes it");
      CHECK(wants.count(t));
    }
  }
}
