#include "http/service.hpp"

#include "actors/auth.hpp"
#include "actors/access.hpp"
#include "actors/ledger.hpp"
#include "actors/contracts.hpp"
#include "actors/coordinator.hpp"
#include "actors/deadlines.hpp"
#include "actors/directory.hpp"
#include "actors/metrics.hpp"
#include "actors/rate_limiter.hpp"
#include "actors/reader.hpp"
#include "actors/rights.hpp"
#include "actors/supervisor.hpp"
#include "actors/writer.hpp"
#include "domain/page_token.hpp"
#include "domain/query.hpp"
#include "http/handler.hpp"
#include "http/https_fetch.hpp"
#include "http/listener.hpp"
#include "http/openapi.hpp"
#include "http/router.hpp"
#include "config/watched_file.hpp"
#include "storage/identity.hpp"
#include "storage/record_store.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <thread>

namespace cl::http {

namespace net = boost::asio;

namespace {

/// The public API: route, then answer locally or through a coordinator.
class public_api final : public request_handler {
public:
  public_api(caf::actor_system& sys, std::shared_ptr<actors::actor_directory> directory,
             std::chrono::milliseconds timeout, std::shared_ptr<const domain::page_token_codec> page_tokens,
             std::int64_t idempotency_retention_ms, std::int64_t recent_sign_in_seconds)
    : sys_(sys),
      directory_(std::move(directory)),
      timeout_(timeout),
      deadlines_(std::make_shared<actors::deadline_watch>(
        std::clamp(timeout / 10, std::chrono::milliseconds{10}, std::chrono::milliseconds{100}))),
      page_tokens_(std::move(page_tokens)),
      retention_ms_(idempotency_retention_ms),
      recent_sign_in_seconds_(recent_sign_in_seconds) {}

  void handle(domain::api_request request, std::function<void(domain::api_reply)> done) override {
    auto m = match_route(route_table(), request.method, request.path);
    if (!m.found) {
      if (!m.allow.empty()) {
        auto r = domain::api_reply::failure(domain::error_id::method_not_allowed,
                                            "This path accepts " + m.allow + ", not " + request.method + ".");
        r.headers.emplace_back("Allow", m.allow);
        return done(std::move(r));
      }
      return done(domain::api_reply::failure(domain::error_id::route_not_found, "No route has this path."));
    }
    // Every parameter takes one value: a repeated one is refused, not resolved by "first wins".
    if (auto repeated = domain::repeated_parameter(request.query)) {
      auto shown = repeated->substr(0, 64);
      auto r = domain::api_reply::failure(domain::error_id::duplicate_parameter,
                                          "The query parameter " + shown + " was given more than once.",
                                          {{shown, "give it once"}});
      r.route = std::string{m.found->path_template};
      return done(std::move(r));
    }
    std::string route{m.found->path_template};
    if (m.found->local) {
      auto r = m.found->local(request);
      r.route = std::move(route);
      return done(std::move(r));
    }
    actors::request_job job;
    job.request = std::move(request);
    job.params = std::move(m.params);
    job.required_scope = std::string{m.found->scope};
    job.plan = m.found->plan;
    job.actors = directory_->snapshot();
    job.timeout = timeout_;
    job.deadlines = deadlines_;
    job.page_tokens = page_tokens_;
    job.idempotency_retention_ms = retention_ms_;
    job.recent_sign_in_seconds = recent_sign_in_seconds_;
    job.reply = [done = std::move(done), route = std::move(route)](domain::api_reply r) {
      r.route = route;
      done(std::move(r));
    };
    actors::coordinate(sys_, std::move(job));
  }

private:
  caf::actor_system& sys_;
  std::shared_ptr<actors::actor_directory> directory_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<actors::deadline_watch> deadlines_;
  std::shared_ptr<const domain::page_token_codec> page_tokens_;
  std::int64_t retention_ms_;
  std::int64_t recent_sign_in_seconds_;
};

/// The operations listener: metrics and health, never part of the public contract.
class admin_api final : public request_handler {
public:
  admin_api(std::shared_ptr<actors::metrics> stats, std::shared_ptr<actors::service_health> health)
    : stats_(std::move(stats)), health_(std::move(health)) {}

  void handle(domain::api_request request, std::function<void(domain::api_reply)> done) override {
    domain::api_reply r;
    r.route = request.path;
    if (request.method != "GET") {
      r = domain::api_reply::failure(domain::error_id::method_not_allowed, "The admin listener only answers GET.");
      r.headers.emplace_back("Allow", "GET");
    } else if (request.path == "/metrics") {
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = stats_->render();
    } else if (request.path == "/healthz") {
      r.body = R"({"status":"ok"})";
    } else if (request.path == "/readyz") {
      bool keys = health_->keys_loaded, draining = health_->draining, down = health_->children_down > 0;
      bool ready = keys && !draining && !down;
      r.status = ready ? 200 : 503;
      r.body = std::string{R"({"status":")"} + (ready ? "ready" : "not_ready") + R"(","signing_keys_loaded":)"
               + (keys ? "true" : "false") + R"(,"draining":)" + (draining ? "true" : "false")
               + R"(,"actors_down":)" + (down ? "true" : "false") + "}";
    } else {
      r = domain::api_reply::failure(domain::error_id::route_not_found, "The admin listener has /metrics, /healthz and /readyz.");
      r.route = {};
    }
    r.headers.emplace_back("Cache-Control", "no-store");
    done(std::move(r));
  }

private:
  std::shared_ptr<actors::metrics> stats_;
  std::shared_ptr<actors::service_health> health_;
};

}  // namespace

struct service::impl {
  config::settings settings;
  std::shared_ptr<actors::metrics> stats = std::make_shared<actors::metrics>();
  std::shared_ptr<actors::service_health> health = std::make_shared<actors::service_health>();
  std::shared_ptr<actors::actor_directory> directory =
    std::make_shared<actors::actor_directory>(static_cast<std::size_t>(settings.storage.readers));
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<actors::writer_stats> writer_stats = std::make_shared<actors::writer_stats>();

  // Declared before anything holding actor handles: destroyed last, after every handle is gone.
  std::unique_ptr<caf::actor_system_config> caf_config;
  std::unique_ptr<caf::actor_system> system;
  caf::actor supervisor;

  net::io_context ioc;
  std::unique_ptr<net::signal_set> signals;
  std::unique_ptr<net::steady_timer> grace_timer;
  std::unique_ptr<public_api> api;
  std::unique_ptr<admin_api> admin;
  std::shared_ptr<listener_context> public_ctx;
  std::shared_ptr<listener_context> admin_ctx;
  std::shared_ptr<listener> public_listener;
  std::shared_ptr<listener> admin_listener;
  std::atomic<int> exit_code{0};
  std::atomic<bool> stopping{false};
  std::shared_ptr<actors::token_cache> tokens_;

  explicit impl(config::settings s) : settings(std::move(s)) {}

  std::shared_ptr<const actors::auth_config> make_auth_config() {
    auto cfg = std::make_shared<actors::auth_config>();
    const auto& a = settings.auth;
    if (settings.development_identity()) {
      auto dev = storage::load_or_create_dev_identity(settings.data_dir);
      cfg->issuer = storage::dev_issuer;
      cfg->static_jwks = dev.jwks_json;
      spdlog::warn("DEVELOPMENT MODE: no auth.issuer configured; trusting only the development key in {}/identity "
                   "(issuer {}). Mint tokens with `contentlake token`. Never expose this to a network.",
                   settings.data_dir, storage::dev_issuer);
    } else {
      cfg->issuer = a.issuer;
      cfg->jwks_file = a.jwks_file;
      cfg->jwks_url = a.jwks_url;
      cfg->jwks_ca_file = a.jwks_ca_file;
    }
    cfg->clock_skew = std::chrono::seconds{a.clock_skew_seconds};
    cfg->refetch_min = std::chrono::seconds{a.jwks_refetch_min_seconds};
    cfg->refresh = std::chrono::seconds{a.jwks_refresh_seconds};
    cfg->fetch_timeout = std::chrono::milliseconds{std::max(100, settings.actors.ask_timeout_ms * 3 / 4)};
    cfg->tokens = tokens_;
    cfg->health = health;
    cfg->fetch = [](const std::string& url, const std::string& ca, std::chrono::milliseconds timeout) {
      return fetch_https(url, ca, timeout);
    };
    if (auto err = actors::validate(*cfg)) throw std::runtime_error(*err);
    return cfg;
  }

  void spawn_actors() {
    caf_config = std::make_unique<caf::actor_system_config>();
    caf_config->set("scheduler.max-threads", settings.actors.scheduler_threads);
    // "sharing" measured better than work stealing on 2 cores (CAF notes, pitfall 7).
    caf_config->set("scheduler.policy", caf::atom("sharing"));
    system = std::make_unique<caf::actor_system>(*caf_config);

    tokens_ = std::make_shared<actors::token_cache>(static_cast<std::size_t>(settings.auth.token_cache_entries));
    auto rights_cfg = std::make_shared<actors::rights_config>();
    rights_cfg->store = store;
    rights_cfg->cache = std::make_shared<actors::rights_cache>(100000);
    rights_cfg->epoch = std::make_shared<std::atomic<std::uint64_t>>(0);
    rights_cfg->policy_file = settings.rights.policy_file;
    {
      auto builtin = domain::parse_policy(builtin_policy_document());
      if (auto* error = std::get_if<std::string>(&builtin)) throw std::runtime_error("built-in policy: " + *error);
      rights_cfg->builtin_policy = std::get<domain::platform_policy>(builtin);
      auto start = actors::starting_policy(*rights_cfg, config::read_file(settings.rights.policy_file));
      if (auto* error = std::get_if<std::string>(&start)) throw std::runtime_error("rights.policy_file " + *error);
      const auto& source = std::get<actors::policy_source>(start);
      rights_cfg->current = std::make_shared<actors::policy_holder>();
      rights_cfg->current->set(source.policy);
      if (source.origin == settings.rights.policy_file)
        spdlog::info("rights: platform policy {} from {}", source.policy.version, source.origin);
      else
        spdlog::warn("rights: policy file {} not found; using the built-in policy {}", settings.rights.policy_file,
                     source.policy.version);
    }
    auto access_cfg = std::make_shared<actors::access_config>();
    access_cfg->store = store;
    access_cfg->cache = std::make_shared<actors::access_cache>(100000);
    access_cfg->epoch = std::make_shared<std::atomic<std::uint64_t>>(0);
    access_cfg->directory_file = settings.access.directory_file;
    {
      auto text = config::read_file(settings.access.directory_file);
      auto start = actors::starting_directory(*access_cfg, text);
      if (auto* error = std::get_if<std::string>(&start)) throw std::runtime_error("access.directory_file " + *error);
      if (text)
        spdlog::info("access: group directory {} from {}", std::get<domain::group_directory>(start).version,
                     settings.access.directory_file);
      else if (!settings.access.directory_file.empty())
        spdlog::warn("access: directory file {} not found; no groups until it appears", settings.access.directory_file);
    }
    directory->update([this, rights_cfg, access_cfg](actors::concern_handles& h) {
      h.tokens = tokens_;
      h.rights_cache = rights_cfg->cache;
      h.rights_epoch = rights_cfg->epoch;
      h.access_cache = access_cfg->cache;
      h.policy = rights_cfg->current;
      h.access_epoch = access_cfg->epoch;
      h.stats = stats;
    });
    auto auth_cfg = make_auth_config();
    auto rl_cfg = std::make_shared<actors::rate_limiter_config>();
    rl_cfg->requests_per_second = settings.rate_limit.requests_per_second;
    rl_cfg->burst = settings.rate_limit.burst;
    rl_cfg->stats = stats;
    if (auto err = actors::validate(*rl_cfg)) throw std::runtime_error(*err);
    auto store_handle = store;
    stats->watch_writes(writer_stats);
    actors::writer_config writer_settings{store, writer_stats, settings.storage.group_commit};
    writer_settings.change_log_retention = std::chrono::seconds{settings.storage.change_log_retention_seconds};
    auto writer_cfg = std::make_shared<const actors::writer_config>(std::move(writer_settings));

    auto ledger_cfg = std::make_shared<const actors::ledger_config>(actors::ledger_config{
      store, directory, stats, settings.idempotency.retention_seconds * 1000,
      std::chrono::milliseconds{2 * settings.actors.ask_timeout_ms},
      std::chrono::milliseconds{settings.idempotency.prune_interval_seconds * 1000}});
    auto sup = std::make_shared<actors::supervisor_config>();
    sup->max_restarts = settings.supervisor.max_restarts;
    sup->window = std::chrono::seconds{settings.supervisor.window_seconds};
    sup->directory = directory;
    sup->stats = stats;
    sup->health = health;
    sup->give_up = [this](const std::string&) {
      exit_code = 70;
      stop();
    };
    sup->children = {
      {"auth", [auth_cfg](caf::actor_system& sys) { return caf::actor_cast<caf::actor>(sys.spawn(actors::auth, auth_cfg)); },
       [](actors::actor_directory& d, const caf::actor& a) {
         d.update([&](actors::concern_handles& h) { h.auth = caf::actor_cast<actors::auth_actor>(a); });
       }},
      {"rate_limiter",
       [rl_cfg](caf::actor_system& sys) { return caf::actor_cast<caf::actor>(sys.spawn(actors::rate_limiter, rl_cfg)); },
       [](actors::actor_directory& d, const caf::actor& a) {
         d.update([&](actors::concern_handles& h) { h.rate_limiter = caf::actor_cast<actors::rate_limiter_actor>(a); });
       }},
      {"rights",
       [rights_cfg](caf::actor_system& sys) {
         return caf::actor_cast<caf::actor>(
           sys.spawn(actors::rights, std::shared_ptr<const actors::rights_config>{rights_cfg}));
       },
       [](actors::actor_directory& d, const caf::actor& a) {
         d.update([&](actors::concern_handles& h) { h.rights = caf::actor_cast<actors::rights_actor>(a); });
       }},
      {"ledger",
       [ledger_cfg](caf::actor_system& sys) { return caf::actor_cast<caf::actor>(sys.spawn(actors::ledger, ledger_cfg)); },
       [](actors::actor_directory& d, const caf::actor& a) {
         d.update([&](actors::concern_handles& h) { h.ledger = caf::actor_cast<actors::ledger_actor>(a); });
       }},
      {"access",
       [access_cfg](caf::actor_system& sys) {
         return caf::actor_cast<caf::actor>(
           sys.spawn(actors::access, std::shared_ptr<const actors::access_config>{access_cfg}));
       },
       [](actors::actor_directory& d, const caf::actor& a) {
         d.update([&](actors::concern_handles& h) { h.access = caf::actor_cast<actors::access_actor>(a); });
       }},
      {"contracts",
       [store_handle](caf::actor_system& sys) {
         return caf::actor_cast<caf::actor>(sys.spawn(actors::contracts, store_handle));
       },
       [](actors::actor_directory& d, const caf::actor& a) {
         d.update([&](actors::concern_handles& h) { h.contracts = caf::actor_cast<actors::contracts_actor>(a); });
       }},
      {"writer",
       [writer_cfg](caf::actor_system& sys) {
         // Detached: the group commit's fsync runs on the writer's own thread.
         return caf::actor_cast<caf::actor>(sys.spawn<caf::detached>(actors::writer, writer_cfg));
       },
       [](actors::actor_directory& d, const caf::actor& a) {
         d.update([&](actors::concern_handles& h) { h.writer = caf::actor_cast<actors::writer_actor>(a); });
       }},
    };
    // Several readers: each is its own child (restarted alone) and serves its own directory view.
    for (std::size_t i = 0; i < directory->readers(); ++i)
      sup->children.push_back(
        {"reader",
         [store_handle](caf::actor_system& sys) { return caf::actor_cast<caf::actor>(sys.spawn(actors::reader, store_handle)); },
         [i](actors::actor_directory& d, const caf::actor& a) { d.set_reader(i, caf::actor_cast<actors::reader_actor>(a)); }});
    if (auto err = actors::validate(*sup)) throw std::runtime_error(*err);
    supervisor = system->spawn(actors::supervisor, std::shared_ptr<const actors::supervisor_config>{sup});
    // The supervisor publishes every child before it answers: after this, the directory is complete.
    caf::scoped_actor self{*system};
    bool ready = false;
    self->request(supervisor, std::chrono::seconds{10}, caf::get_atom_v)
      .receive([&](bool) { ready = true; }, [&](caf::error&) {});
    if (!ready) throw std::runtime_error("the supervisor did not start its actors");
  }

  std::shared_ptr<listener_context> make_context(const std::string& name, request_handler* handler, bool counted) {
    auto ctx = std::make_shared<listener_context>();
    ctx->name = name;
    ctx->body_limit = settings.http.body_limit_bytes;
    ctx->header_limit = settings.http.header_limit_bytes;
    ctx->header_timeout = std::chrono::seconds{settings.http.header_timeout_seconds};
    ctx->idle_timeout = std::chrono::seconds{settings.http.idle_timeout_seconds};
    ctx->read_timeout = std::chrono::seconds{settings.http.read_timeout_seconds};
    ctx->max_connections = settings.http.max_connections;
    ctx->recent_sign_in_seconds = settings.auth.recent_sign_in_seconds;
    ctx->access_log = settings.log.access && counted;
    ctx->handler = handler;
    ctx->stats = counted ? stats.get() : nullptr;
    ctx->on_drained = [this] { net::post(ioc, [this] { maybe_finish_drain(); }); };
    return ctx;
  }

  void start(bool handle_signals) {
    std::filesystem::create_directories(settings.data_dir);
    store = storage::open_lmdb_store(settings.data_dir, settings.storage.map_size_mib);
    spawn_actors();
    auto page_tokens = std::make_shared<const domain::page_token_codec>(
      storage::load_or_create_secret(settings.data_dir, "page-token.key"));
    api = std::make_unique<public_api>(*system, directory, std::chrono::milliseconds{settings.actors.ask_timeout_ms},
                                       std::move(page_tokens), settings.idempotency.retention_seconds * 1000,
                                       settings.auth.recent_sign_in_seconds);
    admin = std::make_unique<admin_api>(stats, health);
    public_ctx = make_context("public", api.get(), true);
    admin_ctx = make_context("admin", admin.get(), false);
    public_listener = std::make_shared<listener>(ioc, settings.listen.host, settings.listen.port, public_ctx);
    admin_listener = std::make_shared<listener>(ioc, settings.admin_listen.host, settings.admin_listen.port, admin_ctx);
    public_listener->run();
    admin_listener->run();
    if (handle_signals) {
      signals = std::make_unique<net::signal_set>(ioc, SIGINT, SIGTERM);
      signals->async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        spdlog::info("received signal {}; draining", sig);
        begin_drain();
      });
    }
  }

  void begin_drain() {
    if (stopping.exchange(true)) return;
    health->draining = true;
    public_ctx->draining = true;
    admin_ctx->draining = true;
    if (signals) {
      boost::system::error_code ec;
      signals->cancel(ec);
    }
    public_listener->drain();
    admin_listener->drain();
    grace_timer = std::make_unique<net::steady_timer>(ioc, std::chrono::seconds{settings.http.shutdown_grace_seconds});
    grace_timer->async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      spdlog::warn("shutdown grace period over; closing remaining connections");
      public_listener->force_close();
      admin_listener->force_close();
    });
    maybe_finish_drain();
  }

  void maybe_finish_drain() {
    if (!stopping || public_ctx->connections > 0 || admin_ctx->connections > 0) return;
    if (grace_timer) grace_timer->cancel();
  }

  void stop() {
    net::post(ioc, [this] { begin_drain(); });
  }

  int run() {
    std::vector<std::thread> extra;
    for (int i = 1; i < settings.http.threads; ++i) extra.emplace_back([this] { ioc.run(); });
    ioc.run();
    for (auto& t : extra) t.join();
    shutdown_actors();
    return exit_code;
  }

  void shutdown_actors() {
    if (!system) return;
    directory->clear();
    if (supervisor) {
      caf::anon_send_exit(supervisor, caf::exit_reason::user_shutdown);
      supervisor = nullptr;
    }
  }

  ~impl() {
    shutdown_actors();
    // Handlers and listeners may hold callbacks into the actor system: drop them first.
    public_listener.reset();
    admin_listener.reset();
    system.reset();
  }
};

service::service(config::settings settings) : impl_(std::make_unique<impl>(std::move(settings))) {}

service::~service() = default;

void service::start(bool handle_signals) {
  impl_->start(handle_signals);
}

std::uint16_t service::port() const {
  return impl_->public_listener->port();
}

std::uint16_t service::admin_port() const {
  return impl_->admin_listener->port();
}

int service::run() {
  return impl_->run();
}

void service::stop() {
  impl_->stop();
}

caf::actor_system& service::system() {
  return *impl_->system;
}

actors::actor_directory& service::directory() {
  return *impl_->directory;
}

}  // namespace cl::http
