// Route group: blobs (spec 4.4 and 3.2). The blob broker actor (actors/blobs/blob_broker.hpp) and its
// plans (actors/blobs/blob_plans.hpp) behind /v0/content-lake/blobs, and the embedded S3-compatible
// object store: a listener on the service's I/O context with its own credentials.

#include "app/blobs_group.hpp"

#include "actors/blobs/blob_broker.hpp"
#include "actors/blobs/blob_plans.hpp"
#include "app/groups.hpp"
#include "http/s3_client.hpp"
#include "http/s3_server.hpp"
#include "storage/identity.hpp"
#include "storage/objects/object_files.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <spdlog/spdlog.h>

#include <cctype>
#include <filesystem>
#include <fstream>

namespace cl::app {

namespace {

constexpr std::uint64_t mib = 1 << 20;

/// The embedded store's credentials: configured, or generated at first start into the data dir.
caf::expected<storage::s3_credentials> embedded_credentials(const startup& s) {
  auto section = s.settings.groups.get<blobs_settings>();
  if (section.embedded_access_key_id.empty() != section.embedded_secret_access_key.empty())
    return startup_failure("blobs.embedded.access_key_id and blobs.embedded.secret_access_key go together");
  if (section.embedded_access_key_id.empty()) return storage::load_or_create_s3_credentials(s.settings.data_dir);
  return storage::s3_credentials{section.embedded_access_key_id, section.embedded_secret_access_key};
}

caf::expected<running_listener> start_embedded_store(const startup& s, boost::asio::io_context& ioc) {
  auto section = s.settings.groups.get<blobs_settings>();
  if (section.backend != "embedded") return running_listener{};
  auto credentials = embedded_credentials(s);
  if (!credentials) return credentials.error();
  http::s3_server_config cfg;
  cfg.host = section.embedded_listen.host;
  cfg.port = section.embedded_listen.port;
  cfg.bucket = section.embedded_bucket;
  cfg.region = section.embedded_region;
  cfg.access_key_id = credentials->access_key_id;
  cfg.secret_access_key = credentials->secret_access_key;
  // S3's 5 MiB floor for parts but the last, lowered only where the test settings lower the part size.
  cfg.min_part_size = std::min<std::uint64_t>(5 * mib, section.part_size_bytes);
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

/// `scheme://authority` of a public URL, and the authority (what clients send as `Host`).
std::optional<std::pair<std::string, std::string>> public_base(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return std::nullopt;
  auto scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  auto authority = url.substr(scheme_end + 3);
  while (!authority.empty() && authority.back() == '/') authority.pop_back();
  if (authority.empty() || authority.find('/') != std::string::npos) return std::nullopt;
  return std::pair{scheme + "://" + authority, authority};
}

/// blobs.backend = s3: the service named by blobs.s3.*.
caf::expected<std::shared_ptr<storage::blob_backend>> make_s3(const blobs_settings& section) {
  http::s3_backend_config c;
  c.endpoint = section.s3_endpoint;
  c.region = section.s3_region;
  c.bucket = section.s3_bucket;
  c.access_key_id = section.s3_access_key_id;
  c.secret_access_key = section.s3_secret_access_key;
  c.path_style = section.s3_path_style;
  if (c.endpoint.empty() || c.bucket.empty() || c.access_key_id.empty())
    return startup_failure("blobs.backend = s3 needs blobs.s3.endpoint, blobs.s3.bucket and blobs.s3.access_key_id");
  if (c.secret_access_key.empty() && !section.s3_secret_access_key_file.empty()) {
    std::ifstream in{section.s3_secret_access_key_file};
    if (!in) return startup_failure("blobs.s3.secret_access_key_file " + section.s3_secret_access_key_file + " cannot be read");
    std::getline(in, c.secret_access_key);
    while (!c.secret_access_key.empty() && std::isspace(static_cast<unsigned char>(c.secret_access_key.back())))
      c.secret_access_key.pop_back();
  }
  if (c.secret_access_key.empty())
    return startup_failure("blobs.backend = s3 needs blobs.s3.secret_access_key or blobs.s3.secret_access_key_file");
  try {
    return std::shared_ptr<storage::blob_backend>{http::make_s3_backend(c)};
  } catch (const std::exception& e) {
    return startup_failure(e.what());
  }
}

caf::expected<std::shared_ptr<storage::blob_backend>> make_backend(const startup& s) {
  auto section = s.settings.groups.get<blobs_settings>();
  if (section.backend == "s3") return make_s3(section);
  auto credentials = embedded_credentials(s);
  if (!credentials) return credentials.error();
  storage::embedded_backend_config b;
  b.files = std::make_shared<storage::object_files>(std::filesystem::path{s.settings.data_dir} / "blobs", false);
  auto url = section.embedded_public_url;
  if (url.empty()) {
    auto port = s.listener_port ? s.listener_port("blobs") : std::nullopt;
    if (!port) return startup_failure("the embedded object store's listener is not running");
    url = "http://" + section.embedded_listen.host + ":" + std::to_string(*port);
  }
  auto base = public_base(url);
  if (!base) return startup_failure("blobs.embedded.public_url must be http(s)://host[:port], got \"" + url + "\"");
  b.public_url = base->first;
  b.host = base->second;
  b.bucket = section.embedded_bucket;
  b.region = section.embedded_region;
  b.access_key_id = credentials->access_key_id;
  b.secret_access_key = credentials->secret_access_key;
  return std::shared_ptr<storage::blob_backend>{storage::make_embedded_backend(b)};
}

caf::expected<std::vector<actors::child_spec>> spawn_blob_broker(const startup& s) {
  auto section = s.settings.groups.get<blobs_settings>();
  if (!s.store) return startup_failure("the blob broker needs the record store");
  if (section.backend != "embedded" && section.part_size_bytes < 5 * mib)
    return startup_failure("blobs.part_size_bytes must be at least 5 MiB (5242880) with an S3 service");
  if (section.multipart_threshold_bytes < section.part_size_bytes)
    return startup_failure("blobs.multipart_threshold_bytes must be at least blobs.part_size_bytes");
  auto backend = make_backend(s);
  if (!backend) return backend.error();
  auto cfg = std::make_shared<actors::blob_broker_config>();
  cfg->store = s.store;
  cfg->backend = std::move(*backend);
  cfg->directory = s.directory;
  cfg->leases = s.leases;
  cfg->limits.multipart_threshold = section.multipart_threshold_bytes;
  cfg->limits.part_size = section.part_size_bytes;
  cfg->limits.max_blob_bytes = section.max_blob_bytes;
  cfg->upload_url_ttl_seconds = section.upload_url_ttl_seconds;
  // Abandoned uploads go within half a URL lifetime after it ends (at least every minute).
  cfg->sweep_interval = std::chrono::milliseconds{std::clamp<std::int64_t>(section.upload_url_ttl_seconds * 500, 200, 60000)};
  std::shared_ptr<const actors::blob_broker_config> shared = cfg;
  return std::vector<actors::child_spec>{actors::supervised<actors::blob_broker_actor>(
    "blob-broker", [shared](caf::actor_system& sys) { return sys.spawn(actors::blob_broker, shared); })};
}

}  // namespace

void register_blobs(registry& r) {
  using std::chrono::minutes;
  r.add_routes({
    {"POST", "/v0/content-lake/blobs/uploads", "content-lake.write", &actors::plan_start_upload, nullptr},
    {"GET", "/v0/content-lake/blobs/uploads/{uploadId}/parts", "content-lake.write", &actors::plan_upload_parts, nullptr},
    // A completion reads every byte of the object once (the store computes its SHA-256).
    {"POST", "/v0/content-lake/blobs/uploads/{uploadId}/complete", "content-lake.write", &actors::plan_complete_upload,
     nullptr, minutes{30}},
    {"DELETE", "/v0/content-lake/blobs/uploads/{uploadId}", "content-lake.write", &actors::plan_abort_upload, nullptr},
    {"GET", "/v0/content-lake/blobs/{id}", "content-lake.read", &actors::plan_get_blob, nullptr, std::chrono::milliseconds{0}, /*reads_accept=*/true},
    {"POST", "/v0/content-lake/blobs/locations", "content-lake.read", &actors::plan_blob_locations, nullptr},
  });
  r.add_actors("blobs", &spawn_blob_broker);
  r.add_options({
    {"blobs.backend", "embedded", "The object store: embedded (inside the service, its own listener) or s3.",
     [](config::settings& s, const std::string& raw) -> std::optional<std::string> {
       if (raw != "embedded" && raw != "s3") return "expected embedded or s3, got \"" + raw.substr(0, 32) + "\"";
       s.groups.get<blobs_settings>().backend = raw;
       return std::nullopt;
     }},
    {"blobs.multipart_threshold_bytes", "67108864", "Uploads of this size and above are multipart.",
     config::integer_member(&blobs_settings::multipart_threshold_bytes, 1, 5ll << 30)},
    {"blobs.part_size_bytes", "16777216",
     "Size of every part but the last (at least 5 MiB with an S3 service; the embedded store takes 1 KiB up, for tests).",
     config::integer_member(&blobs_settings::part_size_bytes, 1024, 5ll << 30)},
    {"blobs.max_blob_bytes", "53687091200", "The largest blob an upload may declare (over it: 400 LIMIT_EXCEEDED).",
     config::integer_member(&blobs_settings::max_blob_bytes, 1, 5ll << 40)},
    {"blobs.upload_url_ttl_seconds", "3600",
     "How long upload URLs live; an upload still in progress after its URLs expire is aborted by the sweep.",
     config::integer_member(&blobs_settings::upload_url_ttl_seconds, 1, 7 * 24 * 3600)},
    {"blobs.embedded.public_url", "",
     "scheme://host[:port] clients reach the embedded store at (presigned URLs); empty: http:// + blobs.embedded.listen.",
     config::text_member(&blobs_settings::embedded_public_url)},
    {"blobs.s3.endpoint", "", "blobs.backend = s3: the service's http(s)://host[:port] (AWS: https://s3.REGION.amazonaws.com).",
     config::text_member(&blobs_settings::s3_endpoint)},
    {"blobs.s3.region", "us-east-1", "The region requests are signed for.", config::text_member(&blobs_settings::s3_region)},
    {"blobs.s3.bucket", "", "The bucket blobs are kept in (it must exist).",
     config::text_member(&blobs_settings::s3_bucket)},
    {"blobs.s3.access_key_id", "", "The S3 access key id.", config::text_member(&blobs_settings::s3_access_key_id)},
    {"blobs.s3.secret_access_key", "", "Its secret (or blobs.s3.secret_access_key_file). Never logged.",
     config::text_member(&blobs_settings::s3_secret_access_key)},
    {"blobs.s3.secret_access_key_file", "", "A file holding the secret (first line), read at start.",
     config::text_member(&blobs_settings::s3_secret_access_key_file)},
    {"blobs.s3.path_style", "true", "Path-style URLs (/bucket/key); false: virtual-host style (bucket.host).",
     config::boolean_member(&blobs_settings::s3_path_style)},
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
