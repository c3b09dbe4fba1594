// Route group: blobs (spec 4.4, issue 13). So far: the embedded S3-compatible object store, a
// listener on the service's I/O context with its own credentials. The broker actor and the
// /v0/content-lake/blobs routes come next.

#include "app/blobs_group.hpp"

#include "app/groups.hpp"
#include "http/s3_server.hpp"
#include "storage/identity.hpp"
#include "storage/object_files.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace cl::app {

namespace {

caf::expected<running_listener> start_embedded_store(const startup& s, boost::asio::io_context& ioc) {
  auto section = s.settings.groups.get<blobs_settings>();
  http::s3_server_config cfg;
  cfg.host = section.embedded_listen.host;
  cfg.port = section.embedded_listen.port;
  cfg.bucket = section.embedded_bucket;
  cfg.region = section.embedded_region;
  if (section.embedded_access_key_id.empty() != section.embedded_secret_access_key.empty())
    return startup_failure("blobs.embedded.access_key_id and blobs.embedded.secret_access_key go together");
  if (section.embedded_access_key_id.empty()) {
    auto generated = storage::load_or_create_s3_credentials(s.settings.data_dir);
    cfg.access_key_id = generated.access_key_id;
    cfg.secret_access_key = generated.secret_access_key;
  } else {
    cfg.access_key_id = section.embedded_access_key_id;
    cfg.secret_access_key = section.embedded_secret_access_key;
  }
  cfg.files = std::make_shared<storage::object_files>(std::filesystem::path{s.settings.data_dir} / "blobs");
  cfg.access_log = s.settings.log.access;
  std::shared_ptr<http::s3_server> server;
  try {
    server = std::make_shared<http::s3_server>(ioc, cfg);
  } catch (const std::exception& e) {
    return startup_failure(e.what());
  }
  server->run();
  spdlog::info("blobs: embedded object store on {}:{} (bucket {}, region {}, access key id {})", cfg.host, server->port(),
               cfg.bucket, cfg.region, cfg.access_key_id);
  return running_listener{[server] { return server->port(); }, [server] { server->stop(); }};
}

std::optional<std::string> bucket_name(const std::string& v) {
  // S3's rules, in short: 3-63 lower-case letters, digits, dots and hyphens.
  if (v.size() < 3 || v.size() > 63) return std::string{"must be 3 to 63 characters"};
  for (char c : v)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
      return std::string{"may hold lower-case letters, digits, dots and hyphens only"};
  return std::nullopt;
}

}  // namespace

void register_blobs(registry& r) {
  r.add_options({
    {"blobs.embedded.listen", "127.0.0.1:8081",
     "The embedded S3-compatible object store's listener, HOST:PORT (port 0: ephemeral).",
     [](config::settings& s, const std::string& raw) -> std::optional<std::string> {
       auto ep = config::parse_endpoint(raw);
       if (!ep) return "expected HOST:PORT, got \"" + raw + "\"";
       s.groups.get<blobs_settings>().embedded_listen = *ep;
       return std::nullopt;
     }},
    {"blobs.embedded.bucket", "contentlake", "The embedded store's one bucket.",
     [](config::settings& s, const std::string& raw) -> std::optional<std::string> {
       if (auto e = bucket_name(raw)) return e;
       s.groups.get<blobs_settings>().embedded_bucket = raw;
       return std::nullopt;
     }},
    {"blobs.embedded.region", "us-east-1", "The region SigV4 signatures must name.",
     config::text_member(&blobs_settings::embedded_region)},
    {"blobs.embedded.access_key_id", "",
     "S3 access key id of the embedded store; empty: generated at first start into <data_dir>/identity/blobs-access-key-id.",
     config::text_member(&blobs_settings::embedded_access_key_id)},
    {"blobs.embedded.secret_access_key", "",
     "Its secret; empty: generated into <data_dir>/identity/blobs-secret-access-key (mode 0600). Never logged.",
     config::text_member(&blobs_settings::embedded_secret_access_key)},
  });
  r.add_listener("blobs", &start_embedded_store);
}

}  // namespace cl::app
