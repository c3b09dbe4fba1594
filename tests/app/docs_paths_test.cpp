// docs/architecture.md points into the tree (where a design decision is written down in full,
// which test checks it): every path it names must be there, so a file that moves takes its
// reference along.

#include "tests/support/paths.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

/// Paths named in `text` under the repository's folders: `storage/backend.hpp`, `deploy/cluster/`,
/// `actors/*_plans.cpp` (a pattern: at least one file matches).
std::set<std::string> named_paths(const std::string& text) {
  std::regex path{R"re((?:^|[^\w/<.-])((?:app|actors|http|domain|storage|config|tests|docs|bench|scripts|deploy|\.ci)/[A-Za-z0-9_./*-]*))re"};
  std::set<std::string> out;
  for (std::sregex_iterator it{text.begin(), text.end(), path}, end; it != end; ++it) {
    auto p = (*it)[1].str();
    while (!p.empty() && (p.back() == '.' || p.back() == ',')) p.pop_back();
    out.insert(p);
  }
  return out;
}

bool matches(const std::filesystem::path& root, const std::string& p) {
  namespace fs = std::filesystem;
  auto star = p.find('*');
  if (star == std::string::npos) return fs::exists(root / p);
  auto slash = p.rfind('/', star);
  auto dir = root / p.substr(0, slash);
  std::regex pattern{std::regex_replace(p.substr(slash + 1), std::regex{R"(\*)"}, "[^/]*")};
  if (!fs::is_directory(dir)) return false;
  for (const auto& e : fs::directory_iterator{dir})
    if (std::regex_match(e.path().filename().string(), pattern)) return true;
  return false;
}

}  // namespace

TEST_CASE("every path docs/architecture.md names is in the tree", "[docs]") {
  auto root = std::filesystem::path{cl::testing::source_dir()};
  std::ifstream in{root / "docs/architecture.md"};
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  auto paths = named_paths(text.str());
  CHECK(paths.size() > 40);
  for (const auto& p : paths) {
    INFO(p);
    CHECK(matches(root, p));
  }
}

TEST_CASE("the path check finds moved files and patterns that match nothing", "[docs]") {
  auto root = std::filesystem::path{cl::testing::source_dir()};
  auto found = named_paths("see `storage/lmdb_store.hpp`, actors/*_messages.hpp and docs/api.md.");
  CHECK(found == std::set<std::string>{"storage/lmdb_store.hpp", "actors/*_messages.hpp", "docs/api.md"});
  CHECK_FALSE(matches(root, "storage/lmdb_store.hpp"));
  CHECK_FALSE(matches(root, "actors/*_messages.hpp"));
  CHECK(matches(root, "docs/api.md"));
  CHECK(matches(root, "actors/*_plans.cpp"));
  CHECK(named_paths("`<data_dir>/identity/` and ../shared/ARCHITECTURE.md").empty());
}
