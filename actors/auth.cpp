#include "actors/auth.hpp"
#include "actors/fault_hooks.hpp"
#include "actors/recheck.hpp"
#include "domain/clock.hpp"


#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

namespace {

using clock = std::chrono::steady_clock;


/// The host of a URL, for log lines that must not carry the URL's path or query.
std::string host_of(const std::string& url) {
  auto start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  auto end = url.find_first_of("/?#", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

/// Which configured source a JWKS document came from.
enum class key_source { development, file, url };

std::variant<domain::key_set, std::string> parse_jwks(const std::string& json) {
  std::string error;
  auto parsed = domain::key_set::parse(json, &error);
  if (!parsed) return error;
  return std::move(*parsed);
}

/// Makes `keys` the set of `source` and the union of all sets the one in force.
void use_keys(auth_state& st, const auth_config& cfg, domain::key_set keys, key_source source) {
  switch (source) {
    case key_source::development: st.static_keys = std::move(keys); break;
    case key_source::file: st.file_keys = std::move(keys); break;
    case key_source::url: st.url_keys = std::move(keys); break;
  }
  // With both a file and a URL configured, both sets are trusted.
  auto all = std::make_shared<domain::key_set>(st.static_keys);
  all->merge(st.file_keys);
  all->merge(st.url_keys);
  st.keys = std::move(all);
  if (cfg.tokens) cfg.tokens->clear();  // a key that left the set must not keep its tokens alive
  if (cfg.health) cfg.health->keys_loaded = st.keys->size() > 0;
}

bool install_keys(auth_state& st, const auth_config& cfg, const std::string& json, key_source source,
                  const std::string& origin) {
  auto parsed = parse_jwks(json);
  if (auto* error = std::get_if<std::string>(&parsed)) {
    spdlog::error("auth: JWKS from {} rejected: {}", origin, *error);
    return false;
  }
  auto& keys = std::get<domain::key_set>(parsed);
  spdlog::info("auth: loaded {} signing key(s) from {}", keys.size(), origin);
  use_keys(st, cfg, std::move(keys), source);
  return true;
}

void reload_file_if_changed(auth_state& st, const auth_config& cfg) {
  if (st.jwks_file->recheck()) use_keys(st, cfg, st.jwks_file->current(), key_source::file);
}

auth_outcome verify(auth_state& st, const auth_config& cfg, const std::string& token, bool* unknown_kid) {
  auto now = domain::now_seconds();
  if (cfg.tokens)
    if (auto who = cfg.tokens->find(token, now)) return {true, std::move(*who), {}};
  domain::verify_options opts;
  opts.issuer = cfg.issuer;
  opts.now = now;
  opts.clock_skew = cfg.clock_skew.count();
  auto out = domain::verify_token(token, *st.keys, opts);
  if (unknown_kid) *unknown_kid = out.unknown_kid;
  if (!out.ok) return {false, {}, std::move(out.error)};
  if (cfg.tokens) cfg.tokens->insert(token, out.who, out.who.expires_at + cfg.clock_skew.count(), now);
  return {true, std::move(out.who), {}};
}

void start_fetch(auth_actor::stateful_pointer<auth_state> self, std::shared_ptr<const auth_config> cfg) {
  auto& st = self->state;
  if (st.fetch_in_flight || cfg->jwks_url.empty()) return;
  st.fetch_in_flight = true;
  st.last_fetch = clock::now();
  auto fetcher = self->system().spawn<caf::detached>(jwks_fetcher, cfg);
  auto finish = [self, cfg](const jwks_document& doc) {
    auto& st = self->state;
    st.fetch_in_flight = false;
    st.fetched_once = true;
    st.last_refresh = clock::now();
    if (doc.ok) install_keys(st, *cfg, doc.json, key_source::url, "issuer " + host_of(cfg->jwks_url));
    else spdlog::error("auth: {}", doc.error);
    auto waiting = std::move(st.waiting);
    st.waiting.clear();
    for (auto& [token, rp] : waiting) rp.deliver(verify(st, *cfg, token, nullptr));
  };
  self->request(fetcher, cfg->fetch_timeout + std::chrono::milliseconds{500}, jwks_atom_v, cfg->jwks_url)
    // The lambdas hold the fetcher's handle: an actor whose last handle is gone terminates.
    .then([finish, fetcher](jwks_document& doc) { finish(doc); },
          [finish, cfg, fetcher](caf::error&) {
            finish(jwks_document{false, {}, "JWKS fetch from " + host_of(cfg->jwks_url) + " did not answer in time"});
          });
}

}  // namespace

std::optional<std::string> validate(const auth_config& cfg) {
  if (cfg.issuer.empty()) return std::string{"auth: no issuer"};
  if (cfg.static_jwks.empty() && cfg.jwks_file.empty() && cfg.jwks_url.empty())
    return std::string{"auth: no source of signing keys"};
  return std::nullopt;
}

auth_actor::behavior_type auth(auth_actor::stateful_pointer<auth_state> self,
                               std::shared_ptr<const auth_config> cfg) {
  accept_fault_delays(self);
  auto& st = self->state;
  using watch = config::watched_config<domain::key_set>;
  st.jwks_file.emplace("auth: JWKS file", cfg->jwks_file, &parse_jwks, domain::key_set{}, watch::on_missing::keep,
                       [](const domain::key_set& k) { return std::to_string(k.size()) + " signing key(s)"; });
  if (!cfg->static_jwks.empty()) install_keys(st, *cfg, cfg->static_jwks, key_source::development, "development identity");
  if (st.jwks_file->watching()) use_keys(st, *cfg, st.jwks_file->start(), key_source::file);
  if (!cfg->jwks_url.empty()) start_fetch(self, cfg);
  if (st.jwks_file->watching() || !cfg->jwks_url.empty()) schedule_recheck(self);
  return {
    [self, cfg](verify_atom, const std::string& token) -> caf::result<auth_outcome> {
      auto& st = self->state;
      try {
        bool unknown_kid = false;
        auto out = verify(st, *cfg, token, &unknown_kid);
        if (out.ok || !unknown_kid || cfg->jwks_url.empty()) return out;
        // Unknown kid: the issuer may have rotated keys. Refetch at most once per refetch_min;
        // a flood of made-up kids then costs the issuer one request per interval.
        bool may_fetch = st.fetch_in_flight || !st.fetched_once
                         || clock::now() - st.last_fetch >= cfg->refetch_min;
        if (!may_fetch) return out;
        auto rp = self->make_response_promise<auth_outcome>();
        st.waiting.emplace_back(token, rp);
        start_fetch(self, cfg);
        return rp;
      } catch (const std::exception& e) {
        spdlog::error("auth: verification failed internally: {}", e.what());
        return auth_outcome{false, {}, domain::api_error{domain::error_id::token_invalid, "The token could not be verified.", {}}};
      }
    },
    [self, cfg](recheck_atom) {
      recheck(self, "auth", [&] {
        reload_file_if_changed(self->state, *cfg);
        if (!cfg->jwks_url.empty() && clock::now() - self->state.last_refresh >= cfg->refresh)
          start_fetch(self, cfg);
      });
    },
  };
}

jwks_fetcher_actor::behavior_type jwks_fetcher(jwks_fetcher_actor::pointer, std::shared_ptr<const auth_config> cfg) {
  return {
    [cfg](jwks_atom, const std::string& url) {
      jwks_document doc;
      try {
        if (!cfg->fetch) throw std::runtime_error("no HTTPS client configured");
        doc.json = cfg->fetch(url, cfg->jwks_ca_file, cfg->fetch_timeout);
        doc.ok = true;
      } catch (const std::exception& e) {
        doc.error = e.what();
      }
      return doc;
    },
  };
}

}  // namespace cl::actors
