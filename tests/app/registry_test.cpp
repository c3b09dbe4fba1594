// The route groups' registry: what each group contributes, and how a start fails when a group's
// configuration is not usable.

#include "app/groups.hpp"
#include "app/access_group.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace cl;

TEST_CASE("the route groups register every route once, each with a scope unless answered locally", "[app]") {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : app::groups().routes()) {
    INFO(r.method << " " << r.path_template);
    CHECK(seen.emplace(std::string{r.method}, std::string{r.path_template}).second);
    CHECK(((r.plan != nullptr) != (r.local != nullptr)));
    if (r.plan) CHECK_FALSE(r.scope.empty());
  }
  CHECK(seen.count({"GET", "/v0/content-lake/resources/{id}/access"}) == 1);  // the access group's
  CHECK(seen.count({"POST", "/v0/contracts"}) == 1);                          // the contracts group's
}

TEST_CASE("a group's configuration section loads from file, environment and flags like the core's", "[app][config]") {
  std::string error;
  auto s = config::load_settings(app::groups().options(), "", {{"CONTENTLAKE_ACCESS_DIRECTORY_FILE", "/etc/groups.json"}},
                                 {}, error);
  REQUIRE(s);
  CHECK(s->groups.get<app::access_settings>().directory_file == "/etc/groups.json");
  // Without the group's options the key is unknown: the section belongs to the group.
  CHECK_FALSE(config::load_settings({}, "", {{"CONTENTLAKE_ACCESS_DIRECTORY_FILE", "/x"}}, {}, error));
  CHECK(error.find("CONTENTLAKE_ACCESS_DIRECTORY_FILE") != std::string::npos);
  // Defaults when the section was never configured.
  config::settings fresh;
  CHECK(static_cast<const config::settings&>(fresh).groups.get<app::access_settings>().directory_file
        == "config/directory.json");
}

TEST_CASE("a spawning function's error stops the start with a message naming the group", "[app]") {
  app::registry r;
  bool later_ran = false;
  r.add_actors("first", [](const app::startup&) -> caf::expected<std::vector<actors::child_spec>> {
    return std::vector<actors::child_spec>{};
  });
  r.add_actors("broken", [](const app::startup&) -> caf::expected<std::vector<actors::child_spec>> {
    return app::startup_failure("example.key must be positive");
  });
  r.add_actors("after", [&](const app::startup&) -> caf::expected<std::vector<actors::child_spec>> {
    later_ran = true;
    return std::vector<actors::child_spec>{};
  });
  config::settings settings;
  app::startup s{settings, "node-a", nullptr, nullptr, nullptr, nullptr, nullptr, {}, {}};
  auto all = r.spawn_all(s);
  REQUIRE_FALSE(all);
  CHECK(app::describe(all.error()) == "broken: example.key must be positive");
  CHECK_FALSE(later_ran);
}
