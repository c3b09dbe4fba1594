#pragma once
/// The service's configuration: one typed, validated value built by `load_settings`.
/// Precedence: embedded defaults < JSON config file < CONTENTLAKE_* environment < command-line flags.

#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <typeindex>
#include <string>
#include <utility>
#include <vector>

namespace cl::config {

/// A host and TCP port to listen on; port 0 asks the OS for an ephemeral one.
struct endpoint {
  std::string host;
  std::uint16_t port = 0;
};

struct auth_settings {
  std::string issuer;          ///< empty: development identity in the data dir
  std::string jwks_file;       ///< JWKS on disk, re-read when it changes
  std::string jwks_url;        ///< JWKS over HTTPS, cached
  std::string jwks_ca_file;    ///< extra CA bundle (PEM) to trust for jwks_url
  int clock_skew_seconds = 60;
  int jwks_refetch_min_seconds = 30;  ///< unknown `kid`: at most one refetch per this interval
  int jwks_refresh_seconds = 300;     ///< jwks_url re-fetched this often regardless
  int token_cache_entries = 10000;
  int recent_sign_in_seconds = 900;  ///< spec 5.4: sensitive operations need a sign-in this recent
};

struct rate_limit_settings {
  double requests_per_second = 200;
  double burst = 400;
};

struct http_settings {
  std::size_t body_limit_bytes = 10 * 1024 * 1024;
  std::size_t header_limit_bytes = 16 * 1024;
  int header_timeout_seconds = 10;  ///< a new connection's first request header must arrive within this
  int idle_timeout_seconds = 60;
  int read_timeout_seconds = 30;          ///< a whole request body, at most
  std::size_t min_body_bytes_per_second = 1024;  ///< after 2 s, a body's arrival rate at least
  int max_connections = 1024;
  int threads = 0;  ///< the public listener's event loops; 0: half the cores, at least one (`event_loops()`)
  int io_threads = 2;  ///< threads running the other listeners, the acceptors and the drain
  int thread_slice_us = 100;  ///< the event loops' time slice asked of the kernel (0: its default)
  std::size_t representation_cache_mib = 64;  ///< renderings of Resources kept (0: none)
  int shutdown_grace_seconds = 10;

  /// The event loops the public listener runs: `threads`, or for 0 half of `cores` (the machine's,
  /// when 0 is given), at least one. Measured on 2 cores: docs/benchmarks.md.
  int event_loops(unsigned cores = 0) const;
};

struct actor_settings {
  int ask_timeout_ms = 2000;
  int scheduler_threads = 2;
};

struct supervisor_settings {
  int max_restarts = 5;
  int window_seconds = 10;
};

struct log_settings {
  std::string level = "info";
  bool access = true;
};

struct storage_settings {
  /// The backend records live in (storage/backend.hpp): its name, its own section in `groups`.
  std::string backend = "lmdb";
  bool group_commit = true;  ///< false: one transaction and fsync per write (benchmark baseline)
  int readers = 2;           ///< reader actors; reads rotate over them
  /// Change-log entries are kept at least this long, and until every registered consumer applied them.
  std::int64_t change_log_retention_seconds = 7 * 24 * 3600;
};

struct rights_settings {
  /// Platform policy file, re-read when it changes; missing: the copy built into the binary.
  std::string policy_file = "config/policy.json";
};

struct idempotency_settings {
  /// How long a stored answer is replayed; afterwards the key is fresh (spec 8: 24 hours).
  std::int64_t retention_seconds = 86400;
  /// How often records past retention are removed.
  int prune_interval_seconds = 60;
};

/// The configuration sections route groups own (app/*_group.cpp), one typed value per section,
/// found by type: a group declares its struct and its options in its own files.
class group_sections {
public:
  /// The section of type `T`, default-constructed on first use.
  template <class T>
  T& get() {
    auto& slot = sections_[std::type_index{typeid(T)}];
    if (!slot.has_value()) slot = T{};
    return std::any_cast<T&>(slot);
  }
  /// The section of type `T` as configured, or its defaults.
  template <class T>
  T get() const {
    auto it = sections_.find(std::type_index{typeid(T)});
    return it == sections_.end() ? T{} : std::any_cast<const T&>(it->second);
  }

private:
  std::map<std::type_index, std::any> sections_;
};

/// Everything `contentlake serve` runs with.
struct settings {
  endpoint listen{"127.0.0.1", 8080};
  std::string data_dir = "./var";
  /// The secrets every node of a cluster shares (`contentlake secrets init`); empty: each is kept in
  /// `<data_dir>/identity/`, created once (one node).
  std::string secrets_file;
  /// This node's name among several on one database (its search index's change-log position, the
  /// leases it holds); empty: the one made at its first start in `<data_dir>/node-name`.
  std::string node_name;
  endpoint admin_listen{"127.0.0.1", 9464};
  /// `POST /faults/kill` on the admin listener (fault tests from outside); off unless asked for.
  bool admin_fault_injection = false;
  auth_settings auth;
  rate_limit_settings rate_limit;
  http_settings http;
  actor_settings actors;
  supervisor_settings supervisor;
  log_settings log;
  storage_settings storage;
  rights_settings rights;
  idempotency_settings idempotency;
  group_sections groups;  ///< the route groups' own sections
  /// Files named by keys ending in `_file` (key, path as resolved): the defaults (`rights.policy_file`,
  /// `access.directory_file`, relative to the working directory), then what a config file, the
  /// environment or the command line set, in the order set. `serve` refuses to start when one is
  /// missing; a key set to "" names none (the built-in policy, no groups).
  std::vector<std::pair<std::string, std::string>> configured_files;

  /// True when no issuer is configured and the development identity is used.
  bool development_identity() const { return auth.issuer.empty(); }
};

/// One documented configuration key.
struct option_doc {
  std::string key;
  std::string env;            ///< CONTENTLAKE_ + key upper-cased, dots as underscores
  std::string default_value;
  std::string description;
};

/// Parses `raw` and stores it in `settings`; an error text when the value is not acceptable.
using option_setter = std::function<std::optional<std::string>(settings&, const std::string&)>;

/// One configuration key: the core's (listen, auth, http, ...) or a route group's section.
struct option {
  std::string key;  ///< dotted: `section.name`
  std::string default_value;
  std::string description;
  option_setter set;
};

/// Setters for a route group's section `Section` (in `settings::groups`).
template <class Section>
option_setter text_member(std::string Section::*member) {
  return [member](settings& s, const std::string& raw) -> std::optional<std::string> {
    s.groups.get<Section>().*member = raw;
    return std::nullopt;
  };
}
std::optional<std::string> parse_integer(const std::string& raw, long long lo, long long hi, long long& out);
template <class Section, class Int>
option_setter integer_member(Int Section::*member, long long lo, long long hi) {
  return [=](settings& s, const std::string& raw) -> std::optional<std::string> {
    long long v = 0;
    if (auto err = parse_integer(raw, lo, hi, v)) return err;
    s.groups.get<Section>().*member = static_cast<Int>(v);
    return std::nullopt;
  };
}
std::optional<std::string> parse_boolean(const std::string& raw, bool& out);
template <class Section>
option_setter boolean_member(bool Section::*member) {
  return [member](settings& s, const std::string& raw) -> std::optional<std::string> {
    bool v = false;
    if (auto err = parse_boolean(raw, v)) return err;
    s.groups.get<Section>().*member = v;
    return std::nullopt;
  };
}

/// Every key: the core's, then `group_options` (the route groups' sections, app/groups.cpp), in
/// the order docs/operations.md lists them.
std::vector<option_doc> documented_options(const std::vector<option>& group_options);

/// The first of `s.configured_files` that does not exist, as "key: path"; nullopt when all do.
std::optional<std::string> missing_configured_file(const settings& s);

/// Builds settings from defaults, `config_file` (empty for none), `environment` (NAME=VALUE pairs;
/// only CONTENTLAKE_* names are read) and `overrides` (key -> value from flags), knowing the core's
/// keys and `group_options`. On failure returns nullopt and sets `error` to a message naming the
/// offending key.
std::optional<settings> load_settings(const std::vector<option>& group_options, const std::string& config_file,
                                      const std::vector<std::pair<std::string, std::string>>& environment,
                                      const std::vector<std::pair<std::string, std::string>>& overrides,
                                      std::string& error);

/// The items of a comma-separated setting (`a, b,c`), each trimmed of spaces, empty ones dropped.
std::vector<std::string> comma_list(const std::string& text);

/// Parses `HOST:PORT` (`[v6]:PORT` too); nullopt on anything else.
std::optional<endpoint> parse_endpoint(const std::string& text);

/// The environment variable naming the config file (read by `serve` when --config is absent).
inline constexpr const char* config_file_env = "CONTENTLAKE_CONFIG";

}  // namespace cl::config
