#include "config/settings.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

namespace cl::config {

namespace json = boost::json;

namespace {

using setter = option_setter;

std::string env_name(const std::string& key) {
  std::string out = "CONTENTLAKE_";
  for (char c : key) out.push_back(c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

template <class Int>
std::optional<Int> parse_int(const std::string& raw) {
  Int v{};
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc{} || p != raw.data() + raw.size()) return std::nullopt;
  return v;
}


/// Integer option in [lo, hi] written to the member `ref(s)` returns.
template <class Int, class Ref>
setter integer(Ref ref, long long lo, long long hi) {
  return [=](settings& s, const std::string& raw) -> std::optional<std::string> {
    long long v = 0;
    if (auto err = parse_integer(raw, lo, hi, v)) return err;
    ref(s) = static_cast<Int>(v);
    return std::nullopt;
  };
}

template <class Ref>
setter real(Ref ref, double lo, double hi) {
  return [=](settings& s, const std::string& raw) -> std::optional<std::string> {
    std::istringstream in{raw};
    double v = 0;
    char extra = 0;
    if (!(in >> v) || (in >> extra) || v < lo || v > hi)
      return "expected a number in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got \"" + raw + "\"";
    ref(s) = v;
    return std::nullopt;
  };
}

template <class Ref>
setter text(Ref ref, std::function<std::optional<std::string>(const std::string&)> check = {}) {
  return [=](settings& s, const std::string& raw) -> std::optional<std::string> {
    if (check)
      if (auto err = check(raw)) return err;
    ref(s) = raw;
    return std::nullopt;
  };
}

template <class Ref>
setter boolean(Ref ref) {
  return [=](settings& s, const std::string& raw) -> std::optional<std::string> {
    bool v = false;
    if (auto err = parse_boolean(raw, v)) return err;
    ref(s) = v;
    return std::nullopt;
  };
}

template <class Ref>
setter address(Ref ref) {
  return [=](settings& s, const std::string& raw) -> std::optional<std::string> {
    auto ep = parse_endpoint(raw);
    if (!ep) return "expected HOST:PORT, got \"" + raw + "\"";
    ref(s) = *ep;
    return std::nullopt;
  };
}

const std::vector<option>& options() {
  static const std::vector<option> all = {
    {"listen", "127.0.0.1:8080", "Public API listener, HOST:PORT (port 0: ephemeral).",
     address([](settings& s) -> endpoint& { return s.listen; })},
    {"data_dir", "./var", "Directory for LMDB data and the development identity.",
     text([](settings& s) -> std::string& { return s.data_dir; },
          [](const std::string& v) -> std::optional<std::string> {
            if (v.empty()) return std::string{"must not be empty"};
            return std::nullopt;
          })},
    {"node.name", "",
     "This node's name among the nodes on one database: its search index's position in the change log and the work "
     "it holds a lease on are recorded under it. Empty: the name made at the node's first start (host name and six "
     "random hex digits), kept in <data_dir>/node-name.",
     text([](settings& s) -> std::string& { return s.node_name; },
          [](const std::string& v) -> std::optional<std::string> {
            for (unsigned char c : v)
              if (c < 0x21 || c > 0x7e) return std::string{"must be printable ASCII without spaces"};
            if (v.size() > 100) return std::string{"must be at most 100 characters"};
            return std::nullopt;
          })},
    {"secrets.file", "",
     "The secrets several nodes share, made once by `contentlake secrets init --to FILE`: the keys that seal page "
     "tokens and change-feed cursors, encrypt webhook secrets at rest, sign development tokens, and the edge purge "
     "secret. Every node of a cluster reads the same file. Empty: each is created once in <data_dir>/identity/ "
     "(one node; another node's page tokens and cursors are then refused with 400).",
     text([](settings& s) -> std::string& { return s.secrets_file; })},
    {"admin.listen", "127.0.0.1:9464", "Operations listener (/metrics, /healthz, /readyz); keep it on loopback.",
     address([](settings& s) -> endpoint& { return s.admin_listen; })},
    {"admin.fault_injection", "false",
     "Fault injection on the admin listener (POST /faults/kill?actor=NAME kills a concern actor, its supervisor "
     "restarts it; POST /faults/delay?actor=NAME&ms=N holds its next messages). For fault tests only: every kill "
     "counts against supervisor.max_restarts.",
     boolean([](settings& s) -> bool& { return s.admin_fault_injection; })},
    {"auth.issuer", "", "Trusted token issuer (`iss`). Empty: development identity created in the data dir.",
     text([](settings& s) -> std::string& { return s.auth.issuer; })},
    {"auth.jwks_file", "", "JWKS file of the issuer's signing keys; re-read when it changes.",
     text([](settings& s) -> std::string& { return s.auth.jwks_file; })},
    {"auth.jwks_url", "", "HTTPS URL of the issuer's JWKS; cached and refreshed.",
     text([](settings& s) -> std::string& { return s.auth.jwks_url; },
          [](const std::string& v) -> std::optional<std::string> {
            if (!v.empty() && v.rfind("https://", 0) != 0) return std::string{"must be an https:// URL"};
            return std::nullopt;
          })},
    {"auth.jwks_ca_file", "", "Extra PEM CA bundle trusted when fetching auth.jwks_url (system CAs are always trusted).",
     text([](settings& s) -> std::string& { return s.auth.jwks_ca_file; })},
    {"auth.clock_skew_seconds", "60", "Tolerance for `exp` and `iat`.",
     integer<int>([](settings& s) -> int& { return s.auth.clock_skew_seconds; }, 0, 300)},
    {"auth.jwks_refetch_min_seconds", "30", "An unknown `kid` triggers at most one JWKS refetch per this interval.",
     integer<int>([](settings& s) -> int& { return s.auth.jwks_refetch_min_seconds; }, 1, 86400)},
    {"auth.jwks_refresh_seconds", "300", "auth.jwks_url is re-fetched this often.",
     integer<int>([](settings& s) -> int& { return s.auth.jwks_refresh_seconds; }, 10, 86400)},
    {"auth.token_cache_entries", "10000", "Verified tokens cached (by SHA-256 of the token) until `exp`.",
     integer<int>([](settings& s) -> int& { return s.auth.token_cache_entries; }, 0, 10000000)},
    {"auth.recent_sign_in_seconds", "900",
     "Sensitive human-only operations (docs/api.md, Recent sign-in) need a token whose `auth_time` is at most this old; "
     "older: 401 AUTH_STALE.",
     integer<int>([](settings& s) -> int& { return s.auth.recent_sign_in_seconds; }, 1, 86400)},
    {"rate_limit.requests_per_second", "200", "Sustained requests per second per `client_id`.",
     real([](settings& s) -> double& { return s.rate_limit.requests_per_second; }, 0.001, 1e9)},
    {"rate_limit.burst", "400", "Requests a `client_id` may make at once before the sustained rate applies.",
     real([](settings& s) -> double& { return s.rate_limit.burst; }, 1, 1e9)},
    {"http.body_limit_bytes", "10485760", "Largest request body; larger -> 400 LIMIT_EXCEEDED.",
     integer<std::size_t>([](settings& s) -> std::size_t& { return s.http.body_limit_bytes; }, 0, 1ll << 40)},
    {"http.header_limit_bytes", "16384", "Largest request header block; larger -> 400 LIMIT_EXCEEDED.",
     integer<std::size_t>([](settings& s) -> std::size_t& { return s.http.header_limit_bytes; }, 1024, 1 << 20)},
    {"http.header_timeout_seconds", "10",
     "A new connection that has not sent its first complete request header within this long is closed.",
     integer<int>([](settings& s) -> int& { return s.http.header_timeout_seconds; }, 1, 3600)},
    {"http.idle_timeout_seconds", "60", "A keep-alive connection that sends no complete header block for this long is closed.",
     integer<int>([](settings& s) -> int& { return s.http.idle_timeout_seconds; }, 1, 3600)},
    {"http.read_timeout_seconds", "30", "A request body that is not complete within this long closes the connection.",
     integer<int>([](settings& s) -> int& { return s.http.read_timeout_seconds; }, 1, 3600)},
    {"http.min_body_bytes_per_second", "1024",
     "A request body must keep arriving: after 2 s it must have come at this many bytes a second since it began, "
     "else the connection is closed (0: only http.read_timeout_seconds bounds it).",
     integer<std::size_t>([](settings& s) -> std::size_t& { return s.http.min_body_bytes_per_second; }, 0, 1ll << 40)},
    {"http.max_connections", "1024",
     "Open connections at most, exactly. At the cap a new connection takes the place of the one that has waited "
     "longest, for a request header or in sending a body; only when every connection is serving a request is "
     "the new one answered 503 SERVER_OVERLOADED and closed (at most 64 such answers at once; beyond, closed unanswered).",
     integer<int>([](settings& s) -> int& { return s.http.max_connections; }, 1, 1000000)},
    {"http.threads", "0", "Event loops of one thread each serving the public listener's connections (reads answered "
     "from the caches run there too); 0: half the machine's cores, at least one (1 on 2 cores, measured best there: "
     "docs/benchmarks.md).",
     integer<int>([](settings& s) -> int& { return s.http.threads; }, 0, 256)},
    {"http.io_threads", "2", "Threads running the admin listener, the embedded object store's listener, the "
     "acceptors and the drain.",
     integer<int>([](settings& s) -> int& { return s.http.io_threads; }, 1, 256)},
    {"http.thread_slice_us", "100",
     "Time slice each event loop's thread asks of the kernel, in microseconds (Linux 6.12 and later: EEVDF's slice "
     "per thread, 100 to 100000; earlier kernels ignore it). Short slices let a thread with requests to answer take "
     "a core back sooner from other work on the machine; 0 keeps the kernel's default (docs/benchmarks.md).",
     integer<int>([](settings& s) -> int& { return s.http.thread_slice_us; }, 0, 100000)},
    {"http.representation_cache_mib", "64",
     "Renderings of Resources kept for reads that repeat (the JSON read with its rights and hash, the Markdown read), "
     "least recently read out first; 0 keeps none.",
     integer<std::size_t>([](settings& s) -> std::size_t& { return s.http.representation_cache_mib; }, 0, 65536)},
    {"http.shutdown_grace_seconds", "10", "On SIGTERM/SIGINT, in-flight requests get this long to finish.",
     integer<int>([](settings& s) -> int& { return s.http.shutdown_grace_seconds; }, 0, 3600)},
    {"actors.ask_timeout_ms", "2000", "Deadline of each API request inside the actors (checked every tenth of it, 10-100 ms); unanswered by then -> 503 BACKEND_UNAVAILABLE.",
     integer<int>([](settings& s) -> int& { return s.actors.ask_timeout_ms; }, 10, 600000)},
    {"actors.scheduler_threads", "2", "CAF worker threads.",
     integer<int>([](settings& s) -> int& { return s.actors.scheduler_threads; }, 1, 256)},
    {"supervisor.max_restarts", "5", "Restarts allowed within supervisor.window_seconds before the process exits non-zero.",
     integer<int>([](settings& s) -> int& { return s.supervisor.max_restarts; }, 0, 1000)},
    {"supervisor.window_seconds", "10", "Window of the restart intensity.",
     integer<int>([](settings& s) -> int& { return s.supervisor.window_seconds; }, 1, 86400)},
    {"log.level", "info", "Operational log level: trace, debug, info, warn, error, off.",
     text([](settings& s) -> std::string& { return s.log.level; },
          [](const std::string& v) -> std::optional<std::string> {
            static const char* levels[] = {"trace", "debug", "info", "warn", "error", "off"};
            if (std::find(std::begin(levels), std::end(levels), v) == std::end(levels))
              return std::string{"expected one of trace, debug, info, warn, error, off"};
            return std::nullopt;
          })},
    {"log.access", "true", "One JSON access-log line per request on standard output.",
     boolean([](settings& s) -> bool& { return s.log.access; })},
    {"storage.readers", "2", "Reader actors serving LMDB reads; requests rotate over them.",
     integer<int>([](settings& s) -> int& { return s.storage.readers; }, 1, 64)},
    {"storage.group_commit", "true", "Commit every write queued during a commit together (one fsync); false commits each alone.",
     boolean([](settings& s) -> bool& { return s.storage.group_commit; })},
    {"storage.change_log_retention_seconds", "604800",
     "Change-log entries are kept at least this long (default 7 days), and longer while a registered consumer "
     "(e.g. the search indexer) has not applied them.",
     integer<std::int64_t>([](settings& s) -> std::int64_t& { return s.storage.change_log_retention_seconds; }, 0,
                           10LL * 365 * 24 * 3600)},
    {"rights.policy_file", "config/policy.json",
     "Platform policy (docs/rights.md), re-read when it changes; it must be there at start (a relative default is "
     "read from the working directory); \"\": the shipped copy built into the binary.",
     text([](settings& s) -> std::string& { return s.rights.policy_file; })},
    {"idempotency.retention_seconds", "86400",
     "How long the answer stored for an Idempotency-Key is replayed; afterwards the key is fresh.",
     integer<std::int64_t>([](settings& s) -> std::int64_t& { return s.idempotency.retention_seconds; }, 1,
                           366ll * 86400)},
    {"idempotency.prune_interval_seconds", "60", "How often idempotency records past retention are removed.",
     integer<int>([](settings& s) -> int& { return s.idempotency.prune_interval_seconds; }, 1, 86400)},
  };
  return all;
}

/// The core's keys and the route groups'.
std::vector<const option*> all_options(const std::vector<option>& group_options) {
  std::vector<const option*> out;
  for (const auto& o : options()) out.push_back(&o);
  for (const auto& o : group_options) out.push_back(&o);
  return out;
}

const option* find_option(const std::vector<const option*>& known, const std::string& key) {
  for (const auto* o : known)
    if (o->key == key) return o;
  return nullptr;
}

bool apply(const std::vector<const option*>& known, settings& s, const std::string& key, const std::string& raw,
           const std::string& origin, std::string& error) {
  const auto* opt = find_option(known, key);
  if (!opt) {
    error = "unknown configuration key \"" + key + "\" (" + origin + ")";
    return false;
  }
  if (auto err = opt->set(s, raw)) {
    error = "configuration key \"" + key + "\" (" + origin + "): " + *err;
    return false;
  }
  if (key.size() > 5 && key.compare(key.size() - 5, 5, "_file") == 0) {
    auto& files = s.configured_files;
    files.erase(std::remove_if(files.begin(), files.end(), [&](const auto& f) { return f.first == key; }), files.end());
    if (!raw.empty()) files.emplace_back(key, raw);
  }
  return true;
}

/// A relative path from a config file, resolved against the file's folder: where the service is
/// started from does not change what it reads.
std::string beside(const std::filesystem::path& config_file, const std::string& raw) {
  if (raw.empty() || std::filesystem::path{raw}.is_absolute()) return raw;
  return (std::filesystem::absolute(config_file).parent_path() / raw).lexically_normal().string();
}

/// Flattens nested objects into dotted keys; scalars become their option text.
bool flatten(const json::object& obj, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out, std::string& error) {
  for (const auto& [k, v] : obj) {
    std::string key = prefix.empty() ? std::string{k} : prefix + "." + std::string{k};
    if (v.is_object()) {
      if (!flatten(v.as_object(), key, out, error)) return false;
    } else if (v.is_string()) {
      out.emplace_back(key, std::string{v.as_string()});
    } else if (v.is_bool()) {
      out.emplace_back(key, v.as_bool() ? "true" : "false");
    } else if (v.is_int64() || v.is_uint64()) {
      out.emplace_back(key, json::serialize(v));
    } else if (v.is_double()) {
      std::ostringstream s;
      s << v.as_double();
      out.emplace_back(key, s.str());
    } else {
      error = "configuration key \"" + key + "\" (config file): expected a string, number or boolean";
      return false;
    }
  }
  return true;
}

std::optional<std::string> validate(const settings& s) {
  if (!s.auth.issuer.empty() && s.auth.jwks_file.empty() && s.auth.jwks_url.empty())
    return std::string{"configuration key \"auth.issuer\": needs auth.jwks_file or auth.jwks_url"};
  if (s.auth.issuer.empty() && (!s.auth.jwks_file.empty() || !s.auth.jwks_url.empty()))
    return std::string{"configuration key \"auth.issuer\": must be set when a JWKS is configured"};
  return std::nullopt;
}

}  // namespace

int http_settings::event_loops(unsigned cores) const {
  if (threads > 0) return threads;
  if (cores == 0) cores = std::thread::hardware_concurrency();
  // On 2 cores shared with other work (the measured case), a second loop's thread competes with
  // that work for a core and the tail grows; the other half serves the actors and the rest.
  return std::max(1, static_cast<int>(cores / 2));
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<endpoint> parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  std::string host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return std::nullopt;
    host = host.substr(1, host.size() - 2);
  }
  auto port = parse_int<unsigned>(text.substr(colon + 1));
  if (!port || *port > 65535) return std::nullopt;
  return endpoint{host, static_cast<std::uint16_t>(*port)};
}

std::optional<std::string> parse_integer(const std::string& raw, long long lo, long long hi, long long& out) {
  auto v = parse_int<long long>(raw);
  if (!v || *v < lo || *v > hi)
    return "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got \"" + raw + "\"";
  out = *v;
  return std::nullopt;
}

std::optional<std::string> parse_boolean(const std::string& raw, bool& out) {
  if (raw == "true" || raw == "1") out = true;
  else if (raw == "false" || raw == "0") out = false;
  else return "expected true or false, got \"" + raw + "\"";
  return std::nullopt;
}

std::vector<option_doc> documented_options(const std::vector<option>& group_options) {
  std::vector<option_doc> out;
  for (const auto* o : all_options(group_options))
    out.push_back({o->key, env_name(o->key), o->default_value, o->description});
  return out;
}

std::optional<std::string> missing_configured_file(const settings& s) {
  for (const auto& [key, path] : s.configured_files) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      return key + ": " + std::filesystem::absolute(path, ec).lexically_normal().string();
  }
  return std::nullopt;
}

std::optional<settings> load_settings(const std::vector<option>& group_options, const std::string& config_file,
                                      const std::vector<std::pair<std::string, std::string>>& environment,
                                      const std::vector<std::pair<std::string, std::string>>& overrides,
                                      std::string& error) {
  settings s;
  auto known = all_options(group_options);
  // A file a key names by default (the platform policy, the group directory) must be there too,
  // unless the configuration sets the key to "" (none): a service started from another directory
  // must not run on the built-in policy and no groups by accident. Setting the key replaces this.
  for (const auto* o : known)
    if (o->key.size() > 5 && o->key.compare(o->key.size() - 5, 5, "_file") == 0 && !o->default_value.empty())
      s.configured_files.emplace_back(o->key, o->default_value);
  if (!config_file.empty()) {
    std::ifstream in{config_file, std::ios::binary};
    if (!in) {
      error = "cannot read config file " + config_file;
      return std::nullopt;
    }
    std::string body{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec || !v.is_object()) {
      error = "config file " + config_file + " is not a JSON object";
      return std::nullopt;
    }
    std::vector<std::pair<std::string, std::string>> flat;
    if (!flatten(v.as_object(), "", flat, error)) return std::nullopt;
    for (const auto& [k, raw] : flat) {
      bool path = k == "data_dir" || k == "secrets.file" || (k.size() > 5 && k.compare(k.size() - 5, 5, "_file") == 0);
      if (!apply(known, s, k, path ? beside(config_file, raw) : raw, "config file " + config_file, error))
        return std::nullopt;
    }
  }
  for (const auto& [name, raw] : environment) {
    if (name.rfind("CONTENTLAKE_", 0) != 0 || name == config_file_env) continue;
    const option* match = nullptr;
    for (const auto* o : known)
      if (env_name(o->key) == name) match = o;
    if (!match) {
      error = "unknown configuration key in environment variable " + name;
      return std::nullopt;
    }
    if (!apply(known, s, match->key, raw, "environment " + name, error)) return std::nullopt;
  }
  for (const auto& [k, raw] : overrides)
    if (!apply(known, s, k, raw, "command line", error)) return std::nullopt;
  if (auto err = validate(s)) {
    error = *err;
    return std::nullopt;
  }
  return s;
}

}  // namespace cl::config
