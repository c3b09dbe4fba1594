// Layer 2 rules: roles, principal shapes, the group directory file, the effective role.

#include "tests/support/paths.hpp"
#include "domain/access.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

using namespace cl::domain;

TEST_CASE("roles are ordered and only reader, writer, owner can be granted", "[access]") {
  CHECK(access_role::none < access_role::reader);
  CHECK(access_role::reader < access_role::writer);
  CHECK(access_role::writer < access_role::owner);
  CHECK(parse_role("reader") == access_role::reader);
  CHECK(parse_role("owner") == access_role::owner);
  CHECK_FALSE(parse_role("none"));
  CHECK_FALSE(parse_role("Owner"));
  CHECK(role_name(access_role::writer) == "writer");
}

TEST_CASE("a grant names a u_, a_ or g_ principal", "[access]") {
  CHECK(is_grantee("u_alice"));
  CHECK(is_grantee("a_ingest-2"));
  CHECK(is_grantee("g_editors"));
  CHECK_FALSE(is_grantee("u_"));
  CHECK_FALSE(is_grantee("x_alice"));
  CHECK_FALSE(is_grantee("u_al ice"));
  CHECK_FALSE(is_grantee("u_al/ice"));
  CHECK_FALSE(is_grantee("u_" + std::string(129, 'a')));
  CHECK(is_grantee("u_" + std::string(128, 'a')));
}

TEST_CASE("effective role: the highest of the principal's own grant and its groups'", "[access]") {
  std::vector<std::pair<std::string, access_role>> grants = {
    {"u_alice", access_role::owner}, {"g_readers", access_role::reader}, {"g_writers", access_role::writer},
    {"u_bob", access_role::reader}};
  struct row {
    const char* who;
    std::vector<std::string> groups;
    access_role expected;
  };
  for (const auto& r : std::vector<row>{
         {"u_alice", {}, access_role::owner},                         // direct grant
         {"u_carol", {}, access_role::none},                          // nothing
         {"u_carol", {"g_readers"}, access_role::reader},             // through a group
         {"u_carol", {"g_readers", "g_writers"}, access_role::writer},  // the highest group
         {"u_bob", {"g_writers"}, access_role::writer},               // a group above the own grant
         {"u_alice", {"g_readers"}, access_role::owner},              // the own grant above a group
         {"u_carol", {"g_other"}, access_role::none},                 // a group without a grant
       }) {
    INFO(r.who);
    CHECK(effective_role(grants, r.who, r.groups) == r.expected);
  }
}

TEST_CASE("the directory file: groups per tenant, members u_ and a_ only", "[access]") {
  auto parsed = parse_directory(R"({"version":"1","groups":[
    {"id":"g_ed","tenant_id":"t_a","members":["u_x","a_y"]},
    {"id":"g_ed","tenant_id":"t_b","members":["u_z"]},
    {"id":"g_all","tenant_id":"t_a","members":["u_x"],"description":"everyone"}]})");
  REQUIRE(std::holds_alternative<group_directory>(parsed));
  const auto& d = std::get<group_directory>(parsed);
  CHECK(d.version == "1");
  CHECK(d.groups_of("t_a", "u_x") == std::vector<std::string>{"g_all", "g_ed"});
  CHECK(d.groups_of("t_a", "a_y") == std::vector<std::string>{"g_ed"});
  CHECK(d.groups_of("t_b", "u_x").empty());  // groups are per tenant
  CHECK(d.groups_of("t_c", "u_x").empty());
  CHECK(d.has_group("t_b", "g_ed"));
  CHECK_FALSE(d.has_group("t_b", "g_all"));

  auto error_of = [](const char* text) {
    auto r = parse_directory(text);
    REQUIRE(std::holds_alternative<std::string>(r));
    return std::get<std::string>(r);
  };
  CHECK(error_of("[]").find("not a JSON object") != std::string::npos);
  CHECK(error_of(R"({"groups":[]})").find("version") != std::string::npos);
  CHECK(error_of(R"({"version":"1","teams":[]})").find("unknown member teams") != std::string::npos);
  CHECK(error_of(R"({"version":"1","groups":[{"id":"editors","tenant_id":"t","members":[]}]})").find("g_ id")
        != std::string::npos);
  CHECK(error_of(R"({"version":"1","groups":[{"id":"g_a","tenant_id":"t","members":["g_b"]}]})").find("u_ and a_")
        != std::string::npos);
  CHECK(error_of(R"({"version":"1","groups":[{"id":"g_a","tenant_id":"t","members":[]},{"id":"g_a","tenant_id":"t","members":[]}]})")
          .find("twice")
        != std::string::npos);
  CHECK(error_of(R"({"version":"1","groups":[{"id":"g_a","members":[]}]})").find("tenant_id") != std::string::npos);
}

TEST_CASE("a stored grant reads back as written", "[access]") {
  access_grant g{"res_1", "g_ed", access_role::writer, "u_alice", "2026-11-22T09:00:00Z"};
  auto back = parse_grant(grant_json(g));
  REQUIRE(back);
  CHECK(back->resource_id == "res_1");
  CHECK(back->principal == "g_ed");
  CHECK(back->role == access_role::writer);
  CHECK(back->granted_by == "u_alice");
  CHECK(back->granted_at == "2026-11-22T09:00:00Z");
  CHECK_FALSE(parse_grant(R"({"resource_id":"res_1","principal":"u","role":"admin","granted_by":"u","granted_at":"x"})"));
}

TEST_CASE("the shipped directory file is valid", "[access]") {
  // config/directory.json is what `serve` reads by default.
  std::ifstream in{cl::testing::source_dir() + "/config/directory.json"};
  REQUIRE(in);
  std::string text{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  CHECK(std::holds_alternative<group_directory>(parse_directory(text)));
}
