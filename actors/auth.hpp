#pragma once
/// The auth actor: verifies bearer tokens (spec 5) against keys from the development identity,
/// a JWKS file (re-read on change) or a JWKS URL (cached; unknown `kid` refetches, rate-limited).

#include "actors/directory.hpp"
#include "actors/interfaces.hpp"
#include "actors/token_cache.hpp"
#include "domain/jwt.hpp"
#include "config/watched_config.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cl::actors {

/// Validated configuration of the auth actor; shared by every incarnation after restarts.
struct auth_config {
  std::string issuer;
  std::string static_jwks;   ///< keys known at start (development identity), may be empty
  std::string jwks_file;     ///< watched file, may be empty
  std::string jwks_url;      ///< https URL, may be empty
  std::string jwks_ca_file;  ///< extra CA bundle for jwks_url
  std::chrono::seconds clock_skew{60};
  std::chrono::seconds refetch_min{30};
  std::chrono::seconds refresh{300};
  std::chrono::milliseconds fetch_timeout{1500};
  /// The HTTPS GET used for `jwks_url` (http/https_fetch.hpp, injected so actors never include
  /// Beast): (url, extra CA file, timeout) -> body; throws on failure. Runs on a detached thread.
  std::function<std::string(const std::string&, const std::string&, std::chrono::milliseconds)> fetch;
  /// Verified tokens, shared with the coordinators; null: nothing is cached.
  std::shared_ptr<token_cache> tokens;
  std::shared_ptr<service_health> health;
};

/// Empty when `cfg` is usable, otherwise what is wrong with it.
std::optional<std::string> validate(const auth_config& cfg);

/// One incarnation's state: the trusted keys (the verified-token cache outlives incarnations
/// in `auth_config::tokens`; each incarnation clears it when it installs its keys).
struct auth_state {
  static constexpr const char* name = "auth";
  std::shared_ptr<const domain::key_set> keys = std::make_shared<domain::key_set>();  ///< union of the below
  domain::key_set static_keys, file_keys, url_keys;
  std::optional<config::watched_config<domain::key_set>> jwks_file;
  std::chrono::steady_clock::time_point last_fetch{};
  std::chrono::steady_clock::time_point last_refresh{};
  bool fetch_in_flight = false;
  bool fetched_once = false;
  /// Verifications waiting for a refetch triggered by an unknown `kid`.
  std::vector<std::pair<std::string, caf::typed_response_promise<auth_outcome>>> waiting;
};

/// The auth actor's behavior.
auth_actor::behavior_type auth(auth_actor::stateful_pointer<auth_state> self,
                               std::shared_ptr<const auth_config> cfg);

/// A detached one-shot JWKS fetcher (blocking HTTPS on its own thread).
jwks_fetcher_actor::behavior_type jwks_fetcher(jwks_fetcher_actor::pointer self, std::shared_ptr<const auth_config> cfg);

}  // namespace cl::actors
