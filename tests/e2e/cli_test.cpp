// The `contentlake` command as an operator runs it: a real process, signals, exit codes.

#include "storage/kv/lmdb_store.hpp"
#include "domain/base64url.hpp"
#include "storage/identity.hpp"
#include "storage/stores.hpp"
#include "storage/search/index.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_store.hpp"
#include "tests/support/threads.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>

using namespace cl::testing;
namespace json = boost::json;

namespace {

json::object payload_of(const std::string& token) {
  auto a = token.find('.');
  auto b = token.find('.', a + 1);
  return json::parse(*cl::domain::base64url_decode(token.substr(a + 1, b - a - 1))).as_object();
}

}  // namespace

TEST_CASE("serve on defaults plus token: a development token is accepted; SIGTERM exits 0", "[cli]") {
  temp_dir dir;
  child server{{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--blobs-listen", "127.0.0.1:0", "--data-dir", dir.path}};
  std::smatch m;
  REQUIRE(server.wait_for_stderr(std::regex{"listening public=127\\.0\\.0\\.1:(\\d+) admin=127\\.0\\.0\\.1:(\\d+)"}, m, 20000));
  auto port = static_cast<unsigned short>(std::stoi(m[1]));
  CHECK(server.err.find("DEVELOPMENT MODE") != std::string::npos);
  CHECK(server.err.find("contentlake token") != std::string::npos);  // the quick-start hint

  child minted{{"token", "--data-dir", dir.path, "--tenant", "t_demo", "--sub", "u_alice", "--client-id", "a_cli",
                "--scopes", "content-lake.read content-lake.write"}};
  REQUIRE(minted.wait_exit(20000) == 0);
  std::string token = minted.out.substr(0, minted.out.find('\n'));
  auto claims = payload_of(token);
  CHECK(claims.at("tenant_id").as_string() == "t_demo");
  CHECK(claims.at("client_id").as_string() == "a_cli");
  CHECK(claims.contains("auth_time"));
  CHECK(claims.at("exp").as_int64() - claims.at("iat").as_int64() == 3600);
  for (const char* c : {"iss", "sub", "scopes", "jti"}) CHECK(claims.contains(c));

  auto r = get_with_token(port, "/v0/content-lake/resources/res_example", token);
  REQUIRE(r);
  CHECK(r->status == 403);
  CHECK(r->body.find("ACCESS_DENIED") != std::string::npos);

  CHECK(server.err.find("records: lmdb format") != std::string::npos);  // the start log names the backend

  ::kill(server.pid, SIGTERM);
  CHECK(server.wait_exit(20000) == 0);
  // The access log went to standard output as JSON, without the token.
  CHECK(server.out.find("\"type\":\"access\"") != std::string::npos);
  CHECK(server.out.find(token.substr(token.size() - 40)) == std::string::npos);
  CHECK(server.err.find(token.substr(token.size() - 40)) == std::string::npos);
}

TEST_CASE("--version names the version, the commit and the data formats, and exits 0", "[cli]") {
  child shown{{"--version"}};
  REQUIRE(shown.wait_exit(20000) == 0);
  std::smatch m;
  REQUIRE(std::regex_search(shown.out, m, std::regex{"^contentlake (\\d+\\.\\d+\\.\\d+) \\(commit ([0-9a-f]{12}(-modified)?|unknown)\\)\n"}));
  CHECK(shown.out.find("record store " + std::to_string(cl::storage::lmdb_format_version) + ",") != std::string::npos);
  CHECK(shown.out.find(std::string{"search index "} + cl::storage::search_index::format() + " ") != std::string::npos);
}

TEST_CASE("token never creates a key: without one it exits non-zero saying where it looked", "[cli]") {
  temp_dir dir;
  child minted{{"token", "--data-dir", dir.path, "--tenant", "t1", "--sub", "u_alice", "--scopes", "content-lake.read"}};
  CHECK(minted.wait_exit(20000) == 2);
  CHECK(minted.out.empty());  // nothing a script would take for a token
  CHECK(minted.err.find(dir.path + "/identity/dev-signing-key.pem") != std::string::npos);
  CHECK(minted.err.find("--data-dir") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path + "/identity/dev-signing-key.pem"));
}

TEST_CASE("token for an application: sub equals client_id and no auth_time; bad input fails", "[cli]") {
  temp_dir dir;
  cl::storage::load_or_create_dev_identity(dir.path);  // as `serve` does at its first start
  child app{{"token", "--data-dir", dir.path, "--tenant", "t1", "--sub", "a_robot", "--scopes", "content-lake.read",
             "--ttl", "60"}};
  REQUIRE(app.wait_exit(20000) == 0);
  auto claims = payload_of(app.out.substr(0, app.out.find('\n')));
  CHECK(claims.at("client_id").as_string() == "a_robot");
  CHECK_FALSE(claims.contains("auth_time"));
  CHECK(claims.at("exp").as_int64() - claims.at("iat").as_int64() == 60);

  // Every usage error exits 2 (docs/operations.md), whichever check finds it.
  child too_long{{"token", "--data-dir", dir.path, "--tenant", "t1", "--sub", "a_robot", "--scopes", "x", "--ttl", "86400"}};
  CHECK(too_long.wait_exit(20000) == 2);
  CHECK(too_long.out.empty());
  child unknown{{"token", "--data-dir", dir.path, "--tenant", "t1", "--sub", "a_robot", "--scopes", "x", "--frobnicate"}};
  CHECK(unknown.wait_exit(20000) == 2);
  child missing{{"token", "--data-dir", dir.path, "--sub", "a_robot", "--scopes", "x"}};
  CHECK(missing.wait_exit(20000) == 2);
  child bad_sub{{"token", "--data-dir", dir.path, "--tenant", "t1", "--sub", "bob", "--scopes", "x"}};
  CHECK(bad_sub.wait_exit(20000) == 2);
  // A tenant with a control character would be refused by the service: never minted.
  child control{{"token", "--data-dir", dir.path, "--tenant", "t1\x01x", "--sub", "a_robot", "--scopes", "x"}};
  CHECK(control.wait_exit(20000) == 2);
  CHECK(control.out.empty());
}

TEST_CASE("token for a person without --client-id uses the development client its help names", "[cli]") {
  temp_dir dir;
  cl::storage::load_or_create_dev_identity(dir.path);
  child help{{"token", "--help"}};
  REQUIRE(help.wait_exit(20000) == 0);
  CHECK(help.out.find("a_dev_cli") != std::string::npos);
  child person{{"token", "--data-dir", dir.path, "--tenant", "t1", "--sub", "u_alice", "--scopes", "content-lake.read"}};
  REQUIRE(person.wait_exit(20000) == 0);
  auto claims = payload_of(person.out.substr(0, person.out.find('\n')));
  CHECK(claims.at("sub").as_string() == "u_alice");
  CHECK(claims.at("client_id").as_string() == "a_dev_cli");
  CHECK(claims.contains("auth_time"));
}

TEST_CASE("relative paths in a config file are read from its folder; a configured file that is missing stops the start",
          "[cli]") {
  temp_dir dir;
  std::ofstream{dir.path + "/policy.json"} << R"({"version":"p-relative","explicit_permission_usages":["AI_TRAINING"]})";
  std::ofstream{dir.path + "/groups.json"} << R"({"version":"1","groups":[]})";
  auto file = dir.path + "/config.json";
  std::ofstream{file} << R"({"rights": {"policy_file": "policy.json"}, "access": {"directory_file": "./groups.json"}})";
  REQUIRE(std::filesystem::current_path() != std::filesystem::path{dir.path});  // started from elsewhere
  child server{{"serve", "--config", file, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--blobs-listen",
                "127.0.0.1:0", "--data-dir", dir.path + "/var"}};
  std::smatch m;
  REQUIRE(server.wait_for_stderr(std::regex{"listening public="}, m, 20000));
  // The actors log the files they read as they start, which may be after the listener's line.
  auto escaped = std::regex_replace(dir.path, std::regex{R"([.^$|()\[\]{}*+?\\])"}, R"(\$&)");
  CHECK(server.wait_for_stderr(std::regex{escaped + "/policy\\.json"}, m, 20000));
  CHECK(server.wait_for_stderr(std::regex{escaped + "/groups\\.json"}, m, 20000));
  CHECK(server.err.find("not found") == std::string::npos);
  ::kill(server.pid, SIGTERM);
  CHECK(server.wait_exit(20000) == 0);

  // A file the configuration names that is not there: exit 2 naming the key and where it looked.
  std::ofstream{file} << R"({"access": {"directory_file": "missing.json"}})";
  child missing{{"serve", "--config", file, "--data-dir", dir.path + "/var"}};
  CHECK(missing.wait_exit(20000) == 2);
  CHECK(missing.err.find("access.directory_file: " + dir.path + "/missing.json") != std::string::npos);
  child from_env{{"serve", "--data-dir", dir.path + "/var"}, {"CONTENTLAKE_RIGHTS_POLICY_FILE=/nonexistent/policy.json"}};
  CHECK(from_env.wait_exit(20000) == 2);
  CHECK(from_env.err.find("rights.policy_file: /nonexistent/policy.json") != std::string::npos);
}

TEST_CASE("an unknown configuration key stops start-up naming the key", "[cli]") {
  temp_dir dir;
  child env_typo{{"serve", "--data-dir", dir.path}, {"CONTENTLAKE_HTTP_THREAD=2"}};
  CHECK(env_typo.wait_exit(20000) == 2);
  CHECK(env_typo.err.find("CONTENTLAKE_HTTP_THREAD") != std::string::npos);

  auto file = dir.path + "/config.json";
  std::ofstream{file} << R"({"auth": {"jwks": "/etc/keys.json"}})";
  child file_typo{{"serve", "--config", file, "--data-dir", dir.path}};
  CHECK(file_typo.wait_exit(20000) == 2);
  CHECK(file_typo.err.find("auth.jwks") != std::string::npos);

  child bad_value{{"serve", "--listen", "nowhere", "--data-dir", dir.path}};
  CHECK(bad_value.wait_exit(20000) == 2);
  CHECK(bad_value.err.find("listen") != std::string::npos);
}

TEST_CASE("reindex rebuilds the search index of a stopped service and refuses a running one", "[cli][search]") {
  temp_dir dir;  // outlives the service: reindex runs on it after the service is gone
  auto data_dir = dir.path + "/data";
  std::string records;  // where the records are on PostgreSQL (the e2e_pg run); empty on LMDB
  {
    test_service svc([&](cl::config::settings& s) { s.data_dir = data_dir; });
    records = svc.postgresql_url();
    cl::testing::storage_environment env{records};
    auto token = read_token("content-lake.read content-lake.write");
    for (int i = 0; i < 2; ++i)
      REQUIRE(post_json(svc.port(), "/v0/content-lake/resources", token,
                        R"({"title":"T","type":"ARTICLE","language":"en","content":{"format":"cl.content/1","blocks":[]}})")
                ->status == 201);
    child running{{"reindex", "--data-dir", data_dir}};
    CHECK(running.wait_exit(20000) == 1);
    CHECK(running.err.find("in use") != std::string::npos);
  }
  cl::testing::storage_environment env{records};
  child stopped{{"reindex", "--data-dir", data_dir}};
  CHECK(stopped.wait_exit(20000) == 0);
  CHECK(stopped.out.find("search index rebuilt: 2 Resources") != std::string::npos);
}

TEST_CASE("a second serve on a data dir in use stops at once and leaves the first one's files alone", "[cli][search]") {
  temp_dir dir;
  auto data_dir = dir.path + "/data";
  test_service first([&](cl::config::settings& s) { s.data_dir = data_dir; });
  cl::testing::storage_environment env{first.postgresql_url()};
  auto shard = std::filesystem::path{data_dir} / "search" / "shard-0";
  REQUIRE(std::filesystem::exists(shard));
  auto created = std::filesystem::last_write_time(shard);
  child second{{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--blobs-listen", "127.0.0.1:0",
                "--data-dir", data_dir}};
  CHECK(second.wait_exit(20000) == 1);
  CHECK(second.err.find("in use by another contentlake process") != std::string::npos);
  // Before the lock, the second took the first one's locked index for damaged and rebuilt it.
  CHECK(second.err.find("rebuilding") == std::string::npos);
  REQUIRE(std::filesystem::exists(shard));
  CHECK(std::filesystem::last_write_time(shard) == created);
  auto token = read_token("content-lake.read content-lake.write");
  CHECK(post_json(first.port(), "/v0/content-lake/resources", token,
                  R"({"title":"T","type":"ARTICLE","language":"en","content":{"format":"cl.content/1","blocks":[]}})")
          ->status == 201);
}

TEST_CASE("a search index another process holds stops the start; it is not rebuilt under that process", "[cli][search]") {
  temp_dir dir;
  auto data_dir = dir.path + "/data";
  std::string records;
  { test_service made([&](cl::config::settings& s) { s.data_dir = data_dir; }); records = made.postgresql_url(); }
  cl::testing::storage_environment env{records};
  // Not a contentlake (the data dir's lock is free): something else that writes the index.
  cl::storage::search_index holder{std::filesystem::path{data_dir} / "search"};
  auto applied = holder.applied();
  child serve{{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--blobs-listen", "127.0.0.1:0",
               "--data-dir", data_dir}};
  CHECK(serve.wait_exit(20000) == 1);
  CHECK(serve.err.find("is in use by another process") != std::string::npos);
  CHECK(serve.err.find("rebuilding") == std::string::npos);
  CHECK(std::filesystem::exists(std::filesystem::path{data_dir} / "search" / "shard-0"));
  CHECK(holder.applied() == applied);
}

TEST_CASE("serve runs its other threads below the indexer's lane; search.indexer_priority=0 keeps them equal", "[cli][search]") {
  errno = 0;
  int base = ::getpriority(PRIO_PROCESS, 0);  // what the child starts with (this thread's value)
  REQUIRE(errno == 0);
  for (int steps : {5, 0}) {
    INFO("search.indexer_priority " << steps);
    temp_dir dir;
    child server{{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--blobs-listen", "127.0.0.1:0", "--data-dir", dir.path},
                 {"CONTENTLAKE_SEARCH_INDEXER_PRIORITY=" + std::to_string(steps)}};
    std::smatch m;
    REQUIRE(server.wait_for_stderr(std::regex{"listening public=127\\.0\\.0\\.1:(\\d+)"}, m, 20000));
    int lanes = 0, others = 0;
    for (const auto& t : threads_of(std::to_string(server.pid))) {
      INFO(t.name);
      if (t.name == "cl-indexer") {
        ++lanes;
        CHECK(t.nice == base);
      } else {
        ++others;
        CHECK(t.nice == std::min(19, base + steps));
      }
    }
    CHECK(lanes >= 1);
    CHECK(others >= 4);  // the main thread, the scheduler's workers, CAF's clock and multiplexer
  }
}

TEST_CASE("secrets init writes a file once; nodes reading it accept each other's tokens, a node without it refuses them",
          "[cli][secrets]") {
  temp_dir dir;
  auto secrets = dir.path + "/cluster.secrets";
  child init{{"secrets", "init", "--to", secrets}};
  REQUIRE(init.wait_exit(20000) == 0);
  struct stat st {};
  REQUIRE(::stat(secrets.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::string written;
  {
    std::ifstream in{secrets};
    written.assign(std::istreambuf_iterator<char>{in}, {});
  }
  for (const auto& name : cl::storage::shared_secret_names()) CHECK(written.find("\n" + name + " ") != std::string::npos);
  // Never overwritten: the nodes reading it would refuse everything sealed with it.
  child again{{"secrets", "init", "--to", secrets}};
  CHECK(again.wait_exit(20000) == 2);
  CHECK(again.err.find("never overwritten") != std::string::npos);
  {
    std::ifstream in{secrets};
    CHECK(std::string{std::istreambuf_iterator<char>{in}, {}} == written);
  }

  // Two nodes with the file (each its own data dir), one without.
  auto start = [&](const std::string& name, const std::vector<std::string>& env) {
    return std::make_unique<child>(
      std::vector<std::string>{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--blobs-listen",
                               "127.0.0.1:0", "--data-dir", dir.path + "/" + name},
      env);
  };
  auto port_of = [](child& server) {
    std::smatch m;
    REQUIRE(server.wait_for_stderr(std::regex{"listening public=127\\.0\\.0\\.1:(\\d+)"}, m, 20000));
    return static_cast<unsigned short>(std::stoi(m[1]));
  };
  auto a = start("a", {"CONTENTLAKE_SECRETS_FILE=" + secrets});
  auto b = start("b", {"CONTENTLAKE_SECRETS_FILE=" + secrets});
  auto c = start("c", {});
  auto port_a = port_of(*a), port_b = port_of(*b), port_c = port_of(*c);
  // The start's hint mints from where the node's key is: the file, not the data dir.
  std::smatch hint;
  REQUIRE(a->wait_for_stderr(std::regex{" token (--[a-z-]+) ([^ ]+) --tenant"}, hint, 20000));
  CHECK(hint[1] == "--secrets-file");
  CHECK(hint[2] == secrets);
  REQUIRE(c->wait_for_stderr(std::regex{" token (--[a-z-]+) ([^ ]+) --tenant"}, hint, 20000));
  CHECK(hint[1] == "--data-dir");
  CHECK(hint[2] == dir.path + "/c");
  CHECK_FALSE(std::filesystem::exists(dir.path + "/a/identity/page-token.key"));  // read from the file
  CHECK_FALSE(std::filesystem::exists(dir.path + "/a/identity/dev-signing-key.pem"));

  auto mint = [&](const std::vector<std::string>& where) {
    std::vector<std::string> args{"token", "--tenant", "t_demo", "--sub", "u_alice", "--scopes",
                                  "content-lake.read content-lake.write"};
    args.insert(args.end(), where.begin(), where.end());
    child minted{args};
    REQUIRE(minted.wait_exit(20000) == 0);
    return minted.out.substr(0, minted.out.find('\n'));
  };
  auto shared = mint({"--secrets-file", secrets});
  auto own = mint({"--data-dir", dir.path + "/c"});
  const std::string list = "/v0/content-lake/resources?page_size=1";
  CHECK(get_with_token(port_a, list, shared)->status == 200);
  CHECK(get_with_token(port_b, list, shared)->status == 200);
  CHECK(get_with_token(port_c, list, shared)->status == 401);
  CHECK(get_with_token(port_a, list, own)->status == 401);

  // A page token node A hands out is good on node B, and refused by node C with the documented 400.
  for (int i = 0; i < 2; ++i) {
    auto created = http_request(port_a, "POST", "/v0/content-lake/resources",
                                {{"Authorization", "Bearer " + shared}, {"Content-Type", "application/json"}},
                                R"({"title":"Tides","type":"CHAPTER","language":"en","content":{"format":"cl.content/1","blocks":[]}})");
    REQUIRE(created);
    REQUIRE(created->status == 201);
  }
  auto first = get_with_token(port_a, list, shared);
  REQUIRE(first);
  auto next = json::parse(first->body).as_object().at("next_page_token");
  REQUIRE(next.is_string());
  auto page = list + "&page_token=" + std::string{next.as_string()};
  auto on_b = get_with_token(port_b, page, shared);
  REQUIRE(on_b);
  CHECK(on_b->status == 200);
  auto on_c = get_with_token(port_c, page, mint({"--data-dir", dir.path + "/c"}));
  REQUIRE(on_c);
  CHECK(on_c->status == 400);
  CHECK(reason_of(*on_c) == "PAGE_TOKEN_INVALID");
  for (auto* server : {a.get(), b.get(), c.get()}) {
    ::kill(server->pid, SIGTERM);
    CHECK(server->wait_exit(20000) == 0);
    CHECK(server->err.find(written.substr(written.find("page-token.key ") + 15, 43)) == std::string::npos);
  }

  // A file that lacks a secret stops the start, naming what is missing.
  std::ofstream{dir.path + "/short.secrets"} << "# nothing\n";
  child lacking{{"serve", "--data-dir", dir.path + "/d"}, {"CONTENTLAKE_SECRETS_FILE=" + dir.path + "/short.secrets"}};
  CHECK(lacking.wait_exit(20000) != 0);
  CHECK(lacking.err.find("holds no") != std::string::npos);
}

TEST_CASE("on PostgreSQL a node whose secrets are not the other nodes' says so at start", "[cli][secrets][postgresql]") {
  temp_dir dir;
  auto url = cl::testing::fresh_postgresql_url();
  auto file1 = dir.path + "/one.secrets", file2 = dir.path + "/two.secrets";
  cl::storage::write_secrets_file(file1);
  cl::storage::write_secrets_file(file2);
  auto run = [&](const std::string& name, const std::string& file) {
    std::vector<std::string> env{"CONTENTLAKE_STORAGE_BACKEND=postgresql", "CONTENTLAKE_STORAGE_POSTGRESQL_URL=" + url};
    if (!file.empty()) env.push_back("CONTENTLAKE_SECRETS_FILE=" + file);
    child server{{"serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--blobs-listen", "127.0.0.1:0",
                  "--data-dir", dir.path + "/" + name},
                 env};
    std::smatch m;
    REQUIRE(server.wait_for_stderr(std::regex{"listening public="}, m, 20000));
    ::kill(server.pid, SIGTERM);
    CHECK(server.wait_exit(20000) == 0);
    return server.err;
  };
  auto own = cl::storage::secrets_fingerprint(cl::storage::secret_place{dir.path + "/a"});
  // The first node, on its own secrets: recorded.
  CHECK(run("a", "").find("secrets: fingerprint " + own + ", the one recorded") != std::string::npos);
  // A second node with its own: told.
  CHECK(run("b", "").find("are not those recorded for the nodes on this database (" + own + ")") != std::string::npos);
  // The move to a secrets file: recorded in place of a node's own; the nodes reading it agree.
  auto shared = cl::storage::secrets_fingerprint(cl::storage::secret_place{dir.path, file1});
  CHECK(run("c", file1).find("secrets: fingerprint " + shared + ", the one recorded") != std::string::npos);
  CHECK(run("d", file1).find("secrets: fingerprint " + shared + ", the one recorded") != std::string::npos);
  // Another file, or none: told, and the file's record stays.
  CHECK(run("e", file2).find("are not those recorded for the nodes on this database (" + shared + ")") != std::string::npos);
  CHECK(run("a", "").find("are not those recorded for the nodes on this database (" + shared + ")") != std::string::npos);
}

TEST_CASE("after an event stream, SIGTERM ends the process within 2 s and the data dir serves again at once", "[cli]") {
  temp_dir dir;
  std::vector<std::string> args{"serve",        "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
                                "--blobs-listen", "127.0.0.1:0", "--data-dir", dir.path};
  auto listening = std::regex{"listening public=127\\.0\\.0\\.1:(\\d+)"};
  std::smatch m;
  child server{args};
  REQUIRE(server.wait_for_stderr(listening, m, 20000));
  auto port = static_cast<unsigned short>(std::stoi(m[1]));
  child minted{{"token", "--data-dir", dir.path, "--tenant", "t_demo", "--sub", "u_alice", "--scopes",
                "content-lake.read content-lake.write"}};
  REQUIRE(minted.wait_exit(20000) == 0);
  std::string token = minted.out.substr(0, minted.out.find('\n'));
  {
    // The README's sequence: a stream is open, a Work is created, the stream gets its event, and
    // its client goes away.
    connection stream{port};
    stream.send("GET /v0/content-lake/changes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                + "\r\nAccept: text/event-stream\r\n\r\n");
    auto created = post_json(port, "/v0/content-lake/works", token, R"({"title":"Neap"})");
    REQUIRE(created);
    REQUIRE(created->status == 201);
  }
  auto stopped_at = std::chrono::steady_clock::now();
  ::kill(server.pid, SIGTERM);
  CHECK(server.wait_exit(2000) == 0);
  INFO("exited after " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - stopped_at).count()
                       << " ms");
  // The data dir's lock went with the process: a new service starts on it at once.
  child again{args};
  CHECK(again.wait_for_stderr(listening, m, 20000));
  CHECK(again.err.find("in use by another contentlake process") == std::string::npos);
  ::kill(again.pid, SIGTERM);
  CHECK(again.wait_exit(20000) == 0);
}
