// The `contentlake` command: `serve` runs the service, `token` mints development tokens.

#include "app/access_sink.hpp"
#include "app/build_info.hpp"
#include "app/data_dir_lock.hpp"
#include "config/settings.hpp"
#include "domain/jwt.hpp"
#include "app/access_group.hpp"
#include "app/blobs_group.hpp"
#include "app/groups.hpp"
#include "app/service.hpp"
#include "storage/backend.hpp"
#include "storage/identity.hpp"
#include "app/migrate_command.hpp"
#include "storage/search/feed.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <unistd.h>

extern char** environ;

namespace {

std::vector<std::pair<std::string, std::string>> environment() {
  std::vector<std::pair<std::string, std::string>> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry{*e};
    auto eq = entry.find('=');
    if (eq != std::string::npos) out.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return out;
}

void setup_logging(const cl::config::settings& s) {
  auto ops = spdlog::stderr_logger_mt("contentlake");
  ops->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  ops->set_level(spdlog::level::from_str(s.log.level));
  ops->flush_on(spdlog::level::info);
  spdlog::set_default_logger(ops);
  // A pipe or a file gets whole writes of about 64 KiB; a terminal a line at a time.
  auto access = std::make_shared<spdlog::logger>("access", std::make_shared<cl::app::access_sink>(STDOUT_FILENO, 1 << 16));
  access->set_pattern("%v");
  access->flush_on(spdlog::level::warn);
  spdlog::register_logger(access);
  spdlog::flush_every(std::chrono::seconds{1});
}

int serve(const std::string& config_file, const std::vector<std::pair<std::string, std::string>>& overrides,
          const std::string& self_path) {
  std::string error;
  std::string file = config_file;
  if (file.empty())
    if (const char* from_env = std::getenv(cl::config::config_file_env)) file = from_env;
  auto settings = cl::config::load_settings(cl::app::groups().options(), file, environment(), overrides, error);
  if (!settings) {
    std::cerr << "contentlake: " << error << "\n";
    return 2;
  }
  if (auto missing = cl::config::missing_configured_file(*settings)) {
    std::cerr << "contentlake: configured file not found: " << *missing
              << " (a relative path in a config file is read from that file's folder; a default one, from the "
                 "environment or the command line, from the working directory; set the key to \"\" for none: the "
                 "built-in policy, no groups)\n";
    return 2;
  }
  setup_logging(*settings);
  try {
    cl::app::service svc{*settings};
    svc.start(true);
    spdlog::info("records: {}", svc.store().describe());
    spdlog::info("listening public={}:{} admin={}:{} data_dir={}", settings->listen.host, svc.port(),
                 settings->admin_listen.host, svc.admin_port(), settings->data_dir);
    if (settings->development_identity()) {
      std::ostringstream hint;
      hint << "\n  Get a development token and try a first request:\n\n"
           << "    TOKEN=$(" << self_path << " token "
           << (settings->secrets_file.empty() ? "--data-dir " + settings->data_dir
                                              : "--secrets-file " + settings->secrets_file)
           << " --tenant t_demo --sub u_alice --client-id a_quickstart"
           << " --scopes \"content-lake.read content-lake.write contracts.read contracts.write\")\n"
           << "    curl -i -H \"Authorization: Bearer $TOKEN\" http://" << settings->listen.host << ":" << svc.port()
           << "/v0/content-lake/resources\n\n"
           << "  A longer walk-through (a Work, a Resource, a contract, its rights) is in README.md.\n";
      auto blobs_cfg = static_cast<const cl::config::settings&>(*settings).groups.get<cl::app::blobs_settings>();
      if (auto blobs = svc.listener_port("blobs"); blobs && blobs_cfg.embedded_access_key_id.empty()) {
        // The secret stays in its file: the hint names the file, never the secret.
        auto identity = settings->data_dir + "/identity";
        hint << "  The embedded S3-compatible object store answers on port " << *blobs
             << "; point the AWS CLI at it with\n"
             << "    AWS_ACCESS_KEY_ID=$(cat " << identity << "/blobs-access-key-id) AWS_SECRET_ACCESS_KEY=$(cat "
             << identity << "/blobs-secret-access-key) \\\n"
             << "      aws --region " << blobs_cfg.embedded_region << " --endpoint-url http://"
             << blobs_cfg.embedded_listen.host << ":" << *blobs << " s3 cp FILE s3://" << blobs_cfg.embedded_bucket
             << "/KEY\n";
      }
      hint << "  The API reference, in a browser: http://" << settings->listen.host << ":" << svc.port()
           << "/v0/docs (the OpenAPI document it renders: /v0/openapi.json)\n";
      std::cerr << hint.str() << std::flush;
    }
    int code = svc.run();
    spdlog::info("stopped (exit code {})", code);
    if (auto access = spdlog::get("access")) access->flush();
    return code;
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
}

/// `contentlake secrets init --to FILE`.
int secrets_init(const std::string& path) {
  try {
    cl::storage::write_secrets_file(path);
    std::cout << "wrote " << path << " (mode 0600): give every node this same file (secrets.file, "
              << "CONTENTLAKE_SECRETS_FILE) and keep it as secret as a private key\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "contentlake secrets init: " << e.what() << "\n";
    return 2;
  }
}

/// The `client_id` of a development token for a person when --client-id is not given.
constexpr const char* development_client_id = "a_dev_cli";

int token(const cl::storage::secret_place& place, const std::string& tenant, const std::string& sub,
          const std::string& scopes, const std::string& client_id, int ttl) {
  const auto& data_dir = place.data_dir;
  try {
    auto found = cl::storage::load_dev_identity(place);
    if (!found) {
      // A new key here would sign tokens the service refuses (it trusts the key of its own data dir).
      std::cerr << "contentlake token: no development key at " << cl::storage::dev_key_path(data_dir)
                << ".\n  `contentlake serve` creates it in its data directory at first start; point `token` at that "
                   "directory with --data-dir DIR (or CONTENTLAKE_DATA_DIR), e.g. the ./var of the directory `serve` "
                   "was started from.\n";
      return 2;
    }
    auto& dev = *found;
    cl::domain::token_request req;
    req.issuer = cl::storage::dev_issuer;
    req.kid = dev.kid;
    req.subject = sub;
    req.tenant_id = tenant;
    // A person's token names the application it came through; for development tokens that is a
    // fixed one unless --client-id says otherwise.
    req.client_id = client_id.empty() && sub.rfind("u_", 0) == 0 ? std::string{development_client_id} : client_id;
    std::istringstream in{scopes};
    for (std::string s; in >> s;) req.scopes.push_back(s);
    req.now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    req.ttl = ttl;
    std::cout << cl::domain::issue_token(dev.key, req) << "\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "contentlake token: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "contentlake token: " << e.what() << "\n";
    return 1;
  }
}

/// `contentlake reindex`: rebuilds the search index from the record store (the service may be
/// stopped or running on another data dir; not on this one, whose lock it would find held).
int reindex(const cl::config::settings& s) {
  try {
    std::filesystem::create_directories(s.data_dir);
    cl::app::data_dir_lock held{s.data_dir};  // not while a service runs on it
    auto store = cl::storage::open_backend(s)->open_records();
    auto done = cl::storage::rebuild_index(std::filesystem::path{s.data_dir} / "search", *store);
    std::cout << "search index rebuilt: " << done.documents << " Resources, from change " << done.applied << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "contentlake reindex: " << e.what() << "\n";
    return 1;
  }
}

/// The settings `serve` would run with (the same config file, environment and --data-dir), or
/// nullopt after saying why on stderr.
std::optional<cl::config::settings> settings_as_served(const std::string& config_file, const std::string& data_dir,
                                                       const char* command) {
  std::string error, file = config_file;
  if (file.empty())
    if (const char* from_env = std::getenv(cl::config::config_file_env)) file = from_env;
  std::vector<std::pair<std::string, std::string>> overrides;
  if (!data_dir.empty()) overrides.emplace_back("data_dir", data_dir);
  auto settings = cl::config::load_settings(cl::app::groups().options(), file, environment(), overrides, error);
  if (!settings) std::cerr << "contentlake " << command << ": " << error << "\n";
  return settings;
}

/// `contentlake backup --to DIR`: a consistent copy of the data dir while the service runs, where
/// the backend keeps its records there; elsewhere the backend says which tools copy them (exit 2).
int backup(const cl::config::settings& s, const std::string& config_file, const std::string& to) {
  try {
    std::vector<std::string> configuration;
    for (const auto& f : {config_file, s.rights.policy_file, s.groups.get<cl::app::access_settings>().directory_file,
                          s.auth.jwks_file})
      if (!f.empty()) configuration.push_back(f);
    auto done = cl::storage::open_backend(s)->backup(to, configuration);
    std::cout << "backup of " << s.data_dir << " in " << to << ": records up to change " << done.last_change << " ("
              << done.record_bytes << " bytes), " << done.objects << " objects (" << done.object_bytes
              << " bytes), " << done.identity_files.size() << " identity files; the search index is rebuilt at "
              << "restore. " << to << "/backup.json names the configuration files.\n";
    return 0;
  } catch (const cl::storage::backup_refused& e) {
    std::cerr << "contentlake backup: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "contentlake backup: " << e.what() << "\n";
    return 1;
  }
}

/// `contentlake restore --from DIR --data-dir NEW`: a backup brought back into a new data dir.
int restore(const cl::config::settings& s, const std::string& from) {
  try {
    auto done = cl::storage::open_backend(s)->restore(from);
    std::cout << "restored " << from << " into " << s.data_dir << ": records up to change " << done.last_change
              << ", " << done.objects << " objects, search index rebuilt (" << done.documents
              << " Resources); change-log epoch " << done.epoch
              << " (change-feed cursors issued before this restore answer 410: clients list again).\n";
    if (!done.configuration.empty()) {
      std::cout << "The backup named these configuration files (copies in " << from << "/config/ when they existed):\n";
      for (const auto& f : done.configuration) std::cout << "  " << f << "\n";
    }
    return 0;
  } catch (const cl::storage::backup_refused& e) {
    std::cerr << "contentlake restore: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "contentlake restore: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

namespace {

/// A subcommand and what running it does (its options are held by the closure).
struct command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

command serve_command(CLI::App& app, const char* argv0) {
  auto* cmd = app.add_subcommand("serve", "Run the service (embedded defaults: 127.0.0.1:8080, ./var)");
  struct options {
    std::string config_file, listen, data_dir, admin_listen, blobs_listen;
  };
  auto o = std::make_shared<options>();
  cmd->add_option("--config", o->config_file, "JSON config file (also CONTENTLAKE_CONFIG)");
  cmd->add_option("--listen", o->listen, "Public listener HOST:PORT (key: listen)");
  cmd->add_option("--data-dir", o->data_dir, "Data directory (key: data_dir)");
  cmd->add_option("--admin-listen", o->admin_listen, "Operations listener HOST:PORT (key: admin.listen)");
  cmd->add_option("--blobs-listen", o->blobs_listen, "Embedded S3-compatible object store HOST:PORT (key: blobs.embedded.listen)");
  return {cmd, [o, argv0] {
            std::vector<std::pair<std::string, std::string>> overrides;
            if (!o->listen.empty()) overrides.emplace_back("listen", o->listen);
            if (!o->data_dir.empty()) overrides.emplace_back("data_dir", o->data_dir);
            if (!o->admin_listen.empty()) overrides.emplace_back("admin.listen", o->admin_listen);
            if (!o->blobs_listen.empty()) overrides.emplace_back("blobs.embedded.listen", o->blobs_listen);
            return serve(o->config_file, overrides, argv0);
          }};
}

command token_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("token", "Print a token signed by the development identity");
  struct options {
    std::string tenant, sub, scopes, client_id, dir, secrets;
    int ttl = 3600;
  };
  auto o = std::make_shared<options>();
  cmd->add_option("--tenant", o->tenant, "tenant_id claim")->required();
  cmd->add_option("--sub", o->sub, "Principal: u_... (person) or a_... (application)")->required();
  cmd->add_option("--scopes", o->scopes, "Space-separated scopes, e.g. \"content-lake.read content-lake.write\"")->required();
  cmd->add_option("--client-id", o->client_id,
                  std::string{"a_... application (default: the --sub itself for a_ subjects, "} + development_client_id
                    + " for u_ subjects)");
  cmd->add_option("--ttl", o->ttl, "Lifetime in seconds, at most 3600")->check(CLI::Range(1, 3600));
  cmd->add_option("--data-dir", o->dir, "Data directory holding the development key (default ./var)");
  cmd->add_option("--secrets-file", o->secrets,
                  "The nodes' secrets file holding the development key (key: secrets.file; also "
                  "CONTENTLAKE_SECRETS_FILE); instead of the data directory's");
  return {cmd, [o] {
            if (o->dir.empty()) {
              const char* env_dir = std::getenv("CONTENTLAKE_DATA_DIR");
              o->dir = env_dir ? env_dir : "./var";
            }
            if (o->secrets.empty()) {
              const char* env_file = std::getenv("CONTENTLAKE_SECRETS_FILE");
              o->secrets = env_file ? env_file : "";
            }
            return token(cl::storage::secret_place{o->dir, o->secrets}, o->tenant, o->sub, o->scopes, o->client_id, o->ttl);
          }};
}

command secrets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("secrets", "Secrets several nodes share");
  cmd->require_subcommand(1);
  auto* init = cmd->add_subcommand("init", "Write a new secrets file (mode 0600) for every node to read (secrets.file)");
  auto to = std::make_shared<std::string>();
  init->add_option("--to", *to, "The new file (never overwritten)")->required();
  return {cmd, [to] { return secrets_init(*to); }};
}

/// A command run on the service's settings (its config file and data dir), stopped or not.
command settings_command(CLI::App& app, const char* name, const char* what, bool with_data_dir,
                         std::function<int(const cl::config::settings&, const std::string& config)> run,
                         std::function<void(CLI::App*)> more = {}) {
  auto* cmd = app.add_subcommand(name, what);
  auto config = std::make_shared<std::string>(), dir = std::make_shared<std::string>();
  if (more) more(cmd);
  cmd->add_option("--config", *config, "The service's JSON config file (also CONTENTLAKE_CONFIG)");
  if (with_data_dir) cmd->add_option("--data-dir", *dir, "Data directory (key: data_dir; default as `serve`)");
  return {cmd, [config, dir, name, run] {
            auto s = settings_as_served(*config, *dir, name);
            return s ? run(*s, *config) : 2;
          }};
}

command migrate_command(CLI::App& app) {
  auto m = std::make_shared<cl::app::migrate_options>();
  return settings_command(
    app, "migrate", "Copy every record from one record store into another, then verify (services stopped)", false,
    [m](const cl::config::settings& s, const std::string&) { return cl::app::migrate(s, *m); },
    [m](CLI::App* cmd) {
      cmd->add_option("--from", m->from, "An LMDB data dir, or a PostgreSQL URL")->required();
      cmd->add_option("--to", m->to, "An LMDB data dir, or a PostgreSQL URL (empty unless --resume)")->required();
      cmd->add_option("--state", m->state,
                      "A progress file (default: kept with the target: migrate.state in its data dir, or its "
                      "database)");
      cmd->add_flag("--resume", m->resume, "Go on with an interrupted migration");
    });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"contentlake: the Content Lake public API service"};
  app.require_subcommand(1);
  app.set_version_flag("--version", cl::app::version_text());
  auto backup_to = std::make_shared<std::string>(), restore_from = std::make_shared<std::string>();
  std::vector<command> commands{
    serve_command(app, argv[0]),
    token_command(app),
    secrets_command(app),
    settings_command(app, "reindex", "Rebuild the search index from the record store (service stopped)", true,
                     [](const cl::config::settings& s, const std::string&) { return reindex(s); }),
    migrate_command(app),
    settings_command(
      app, "backup", "Copy the data dir consistently while the service runs", true,
      [backup_to](const cl::config::settings& s, const std::string& config) { return backup(s, config, *backup_to); },
      [backup_to](CLI::App* cmd) { cmd->add_option("--to", *backup_to, "A new directory for the backup")->required(); }),
    settings_command(
      app, "restore", "Bring a backup back into a new data dir (service stopped)", true,
      [restore_from](const cl::config::settings& s, const std::string&) { return restore(s, *restore_from); },
      [restore_from](CLI::App* cmd) { cmd->add_option("--from", *restore_from, "The backup directory")->required(); }),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version exit 0; every usage error exits 2, whatever CLI11's own code for it
    // (docs/operations.md "Running").
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (const auto& c : commands)
    if (*c.app) return c.run();
  return 2;
}
