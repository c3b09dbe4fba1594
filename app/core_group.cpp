// The platform every route group builds on: auth (spec 5), rate limiting (spec 8), the readers and
// the writer of the record store, the idempotency ledger (spec 4.6), the rights resolver
// (spec 2.3). Its configuration is the core's (config/settings.hpp).

#include "actors/auth.hpp"
#include "actors/ledger.hpp"
#include "actors/log_gate.hpp"
#include "actors/ticker.hpp"
#include "actors/metrics.hpp"
#include "actors/rate_limiter.hpp"
#include "actors/reader.hpp"
#include "actors/representation_cache.hpp"
#include "actors/rights.hpp"
#include "actors/writer.hpp"
#include "app/cluster_group.hpp"
#include "app/groups.hpp"
#include "storage/backend.hpp"
#include "http/https_fetch.hpp"
#include "http/openapi.hpp"
#include "storage/identity.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

namespace cl::app {

namespace {

using children = caf::expected<std::vector<actors::child_spec>>;

children spawn_auth(const startup& s) {
  auto cfg = std::make_shared<actors::auth_config>();
  const auto& a = s.settings.auth;
  if (s.settings.development_identity()) {
    auto dev = storage::load_or_create_dev_identity(secrets_of(s.settings));
    cfg->issuer = storage::dev_issuer;
    cfg->static_jwks = dev.jwks_json;
    spdlog::warn("DEVELOPMENT MODE: no auth.issuer configured; trusting only the development key in {} "
                 "(issuer {}). Mint tokens with `contentlake token`. Never expose this to a network.",
                 s.settings.secrets_file.empty() ? s.settings.data_dir + "/identity" : s.settings.secrets_file,
                 storage::dev_issuer);
  } else {
    cfg->issuer = a.issuer;
    cfg->jwks_file = a.jwks_file;
    cfg->jwks_url = a.jwks_url;
    cfg->jwks_ca_file = a.jwks_ca_file;
  }
  cfg->clock_skew = std::chrono::seconds{a.clock_skew_seconds};
  cfg->refetch_min = std::chrono::seconds{a.jwks_refetch_min_seconds};
  cfg->refresh = std::chrono::seconds{a.jwks_refresh_seconds};
  cfg->fetch_timeout = std::chrono::milliseconds{std::max(100, s.settings.actors.ask_timeout_ms * 3 / 4)};
  cfg->tokens = s.tokens;
  cfg->health = s.health;
  cfg->fetch = [](const std::string& url, const std::string& ca, std::chrono::milliseconds timeout) {
    return http::fetch_https(url, ca, timeout);
  };
  if (auto err = actors::validate(*cfg)) return startup_failure(*err);
  s.directory->update([&](actors::concern_handles& h) { h.tokens = s.tokens; });
  std::shared_ptr<const actors::auth_config> fixed = cfg;
  return std::vector<actors::child_spec>{actors::supervised<actors::auth_actor>(
    "auth", [fixed](caf::actor_system& sys) { return sys.spawn(actors::auth, fixed); })};
}

children spawn_rate_limiter(const startup& s) {
  auto cfg = std::make_shared<actors::rate_limiter_config>();
  cfg->requests_per_second = s.settings.rate_limit.requests_per_second;
  cfg->burst = s.settings.rate_limit.burst;
  cfg->stats = s.stats;
  if (auto err = actors::validate(*cfg)) return startup_failure(*err);
  // Several nodes on one database: each charges its buckets what the others admitted.
  // The exchange is a supervised ticker (`rate-sharing`), not a thread.
  if (auto exchange = s.backend->open_rate_exchange(s.node))
    cfg->sharing = std::make_shared<actors::rate_sharing>(
      std::move(exchange), std::chrono::milliseconds{s.settings.groups.get<cluster_settings>().rate_limit_share_ms},
      false);
  // The buckets outlive the actor (its restart keeps every quota); coordinators decide in place.
  cfg->table = std::make_shared<actors::rate_table>(cfg->requests_per_second, cfg->burst, cfg->stats, cfg->sharing);
  s.directory->update([&](actors::concern_handles& h) { h.rates = cfg->table; });
  std::shared_ptr<const actors::rate_limiter_config> fixed = cfg;
  std::vector<actors::child_spec> out{actors::supervised<actors::rate_limiter_actor>(
    "rate_limiter", [fixed](caf::actor_system& sys) { return sys.spawn(actors::rate_limiter, fixed); })};
  if (cfg->sharing)
    out.push_back(actors::supervised_ticker(
      "rate-sharing",
      [sharing = cfg->sharing] {
        sharing->share();
        return sharing->every();
      },
      cfg->sharing->every()));
  return out;
}

children spawn_rights(const startup& s) {
  auto cfg = std::make_shared<actors::rights_config>();
  cfg->store = s.store;
  cfg->cache = std::make_shared<actors::rights_cache>(100000);
  cfg->possible = std::make_shared<actors::possible_cache>(10000);
  cfg->epoch = std::make_shared<std::atomic<std::uint64_t>>(0);
  cfg->outside_changes = s.directory->snapshot()->outside_changes;
  cfg->directory = s.directory;
  cfg->policy_file = s.settings.rights.policy_file;
  auto builtin = domain::parse_policy(http::builtin_policy_document());
  if (auto* error = std::get_if<std::string>(&builtin)) return startup_failure("built-in policy: " + *error);
  cfg->builtin_policy = std::get<domain::platform_policy>(builtin);
  // A policy file that is there but invalid stops the start; a missing one means the built-in.
  auto start = actors::watched_policy(*cfg).check();
  if (auto* error = std::get_if<std::string>(&start)) return startup_failure("rights.policy_file " + *error);
  cfg->current = std::make_shared<actors::policy_holder>();
  cfg->current->set(std::get<domain::platform_policy>(start));
  // A contract or Work changed on another node: resolutions cached here are not found again (this
  // node's own writes bump the epoch before they answer).
  s.store->watch_others([epoch = cfg->epoch](const std::vector<storage::change_entry>& changes) {
    for (const auto& c : changes)
      if (c.kind == storage::change_kind::contract || c.kind == storage::change_kind::work) return void(++*epoch);
  });
  s.directory->update([&](actors::concern_handles& h) {
    h.rights_cache = cfg->cache;
    h.possible_cache = cfg->possible;
    h.rights_epoch = cfg->epoch;
    h.policy = cfg->current;
  });
  std::shared_ptr<const actors::rights_config> fixed = cfg;
  return std::vector<actors::child_spec>{actors::supervised<actors::rights_actor>(
    "rights", [fixed, blocking = s.backend->traits().reads_block](caf::actor_system& sys) {
      return spawn_reading(sys, blocking, actors::rights, fixed);
    })};
}


/// `n` detached copies of `behavior` (n > 1) behind one `front` that routes to them and is linked
/// to them: the first with `cfg`, the others with it but `prunes` off (housekeeping runs once).
template <class Handle, class Behavior, class Front, class Config>
actors::child_spec spread(const char* name, std::size_t n, Behavior behavior, Front front, const Config& cfg) {
  auto first = std::make_shared<const Config>(cfg);
  auto quiet = cfg;
  quiet.prunes = false;
  auto rest = std::make_shared<const Config>(std::move(quiet));
  return actors::supervised<Handle>(name, [=](caf::actor_system& sys) {
    std::vector<Handle> each;
    for (std::size_t i = 0; i < n; ++i) each.push_back(sys.spawn<caf::detached>(behavior, i == 0 ? first : rest));
    return sys.spawn(front, std::move(each));
  });
}

children spawn_ledger(const startup& s) {
  const auto& c = s.settings;
  actors::ledger_config settings{s.store, s.directory, s.stats, c.idempotency.retention_seconds * 1000,
                                 std::chrono::milliseconds{2 * c.actors.ask_timeout_ms},
                                 std::chrono::milliseconds{c.idempotency.prune_interval_seconds * 1000}};
  // Where a key's look-up is a round trip and the store checks uniqueness itself, a write whose only
  // effect is its guarded write lets the record it inserts be the check (actors/ledger.hpp). On
  // LMDB a look-up is a read of a page.
  settings.trusts_writes = s.backend->traits().trusts_inserts;
  settings.leases = s.leases;
  // Several writer lanes (a record lookup is a round trip): as many shards as lanes, detached (a
  // lookup blocks its thread), so lookups of different keys run at once.
  if (auto shards = s.backend->writer_lanes(); shards > 1)
    return std::vector<actors::child_spec>{
      spread<actors::ledger_actor>("ledger", shards, actors::ledger, actors::ledger_shards, settings)};
  auto cfg = std::make_shared<const actors::ledger_config>(std::move(settings));
  return std::vector<actors::child_spec>{actors::supervised<actors::ledger_actor>(
    "ledger", [cfg](caf::actor_system& sys) { return sys.spawn(actors::ledger, cfg); })};
}

children spawn_writer(const startup& s) {
  auto stats = std::make_shared<actors::writer_stats>();
  if (s.stats) s.stats->watch_writes(stats);
  actors::writer_config settings{s.store, stats, s.settings.storage.group_commit};
  settings.change_log_retention = std::chrono::seconds{s.settings.storage.change_log_retention_seconds};
  settings.leases = s.leases;
  // Pruning is checked at most once a minute, or twice per retention when that is shorter.
  settings.change_log_prune_interval =
    std::clamp<std::chrono::milliseconds>(settings.change_log_retention / 2, std::chrono::milliseconds{100},
                                          std::chrono::seconds{60});
  auto lanes = s.backend->writer_lanes();
  // A backend that commits several transactions at once: a group commit per lane, the first prunes.
  if (lanes > 1)
    return std::vector<actors::child_spec>{
      spread<actors::writer_actor>("writer", lanes, actors::writer, actors::writer_lanes, settings)};
  auto cfg = std::make_shared<const actors::writer_config>(std::move(settings));
  return std::vector<actors::child_spec>{actors::supervised<actors::writer_actor>("writer", [cfg](caf::actor_system& sys) {
    // Detached: the group commit's fsync runs on the writer's own thread.
    return sys.spawn<caf::detached>(actors::writer, cfg);
  })};
}

/// Where other nodes write too, this node reads the change log every `follow_every` (what they
/// changed leaves its caches): a supervised ticker, restarted like every actor. While it is away
/// the lag grows past `storage.postgresql.max_lag_ms` and reads pass the caches by.
children spawn_log_follower(const startup& s) {
  auto every = s.store->follow_every();
  if (every.count() == 0) return std::vector<actors::child_spec>{};
  return std::vector<actors::child_spec>{actors::supervised_ticker(
    "log-follower",
    [store = s.store, every] {
      store->follow();
      return every;
    },
    every)};
}

/// /readyz's `record_store` check, probed once a second where a read waits on a server (a probe
/// may wait up to 2 s), four times a second while the store is unreachable: a probe that reaches it
/// ends the pool's refusal (a failover's new primary is used within a quarter of a second of it
/// answering, not a second). A supervised ticker.
children spawn_store_probe(const startup& s) {
  if (!s.backend->traits().reads_block || !s.health) return std::vector<actors::child_spec>{};
  auto reachable = s.health->declare_check("record_store", true);
  return std::vector<actors::child_spec>{actors::supervised_ticker("store-probe", [store = s.store, reachable] {
    bool now = store->probe();
    if (now != reachable->exchange(now))
      now ? spdlog::info("record store: reachable again") : spdlog::error("record store: unreachable; /readyz answers 503");
    return std::chrono::milliseconds{now ? 1000 : 250};
  })};
}

/// Detached readers behind each view's reader where a read blocks (a PostgreSQL round trip).
constexpr std::size_t blocking_reader_workers = 4;

children spawn_log_gate(const startup& s) {
  // Where the catch-up waits on a server, the gate is detached: the wait holds its own thread.
  bool detached = s.backend->traits().reads_block;
  return std::vector<actors::child_spec>{actors::supervised<actors::log_gate_actor>(
    "log-gate", [store = s.store, detached](caf::actor_system& sys) {
      return spawn_reading(sys, detached, actors::log_gate, store);
    })};
}

children spawn_readers(const startup& s) {
  // Renderings of Resources the coordinators make and reuse, beside the records the readers read.
  auto representations =
    std::make_shared<actors::representation_cache>(s.settings.http.representation_cache_mib << 20);
  s.directory->update([&](actors::concern_handles& h) { h.representations = representations; });
  if (s.stats) {
    auto held = s.stats->declare_gauge("contentlake_representation_cache_bytes",
                                       "Bytes of Resource renderings kept (at most http.representation_cache_mib MiB).");
    s.stats->on_render([held, cache = std::weak_ptr<actors::representation_cache>(representations)] {
      if (auto c = cache.lock()) held.set(static_cast<double>(c->bytes()));
    });
  }
  // Several readers: each is its own child (restarted alone) and serves its own directory view.
  // Where a read waits on a server, each view's reader is a front for `blocking_reader_workers`
  // detached readers: a round trip holds a thread of its own, never one of the scheduler's, and
  // reads wait on the database side by side.
  std::vector<actors::child_spec> out;
  bool blocking = s.backend->traits().reads_block;
  for (std::size_t i = 0; i < s.directory->readers(); ++i)
    out.push_back(actors::supervised<actors::reader_actor>(
      "reader",
      [store = s.store, blocking](caf::actor_system& sys) {
        if (!blocking) return sys.spawn(actors::reader, store);
        std::vector<actors::reader_actor> workers;
        for (std::size_t w = 0; w < blocking_reader_workers; ++w)
          workers.push_back(sys.spawn<caf::detached>(actors::reader, store));
        return sys.spawn(actors::reader_front, std::move(workers));
      },
      i));
  return out;
}

}  // namespace

void register_core(registry& r) {
  r.add_options(storage::backend_options());
  r.add_actors("auth", &spawn_auth);
  r.add_actors("rate_limiter", &spawn_rate_limiter);
  r.add_actors("rights", &spawn_rights);
  r.add_actors("ledger", &spawn_ledger);
  r.add_actors("writer", &spawn_writer);
  r.add_actors("readers", &spawn_readers);
  r.add_actors("log_gate", &spawn_log_gate);
  r.add_actors("log_follower", &spawn_log_follower);
  r.add_actors("store_probe", &spawn_store_probe);
}

}  // namespace cl::app
