#include "app/build_info.hpp"
#include "app/data_dir_lock.hpp"
#include "app/service.hpp"

#include "actors/directory.hpp"
#include "actors/metrics.hpp"
#include "actors/supervisor.hpp"
#include "actors/token_cache.hpp"
#include "app/groups.hpp"
#include "app/cluster_group.hpp"
#include "app/mcp_group.hpp"
#include "domain/page_token.hpp"
#include "http/api.hpp"
#include "http/event_loops.hpp"
#include "http/listener.hpp"
#include "http/resource_metadata.hpp"
#include "domain/change_cursor.hpp"
#include "storage/backend.hpp"
#include "storage/identity.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/steady_timer.hpp>
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <malloc.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

// jemalloc's control call when the binary links it (the service does; the tests do not).
extern "C" int mallctl(const char* name, void* old, std::size_t* old_size, void* value, std::size_t size)
  __attribute__((weak));

namespace cl::app {

namespace net = boost::asio;

struct service::impl {
  /// Declared first, so released last: after everything that writes into the data dir is closed.
  std::optional<data_dir_lock> dir_lock;
  config::settings settings;
  std::shared_ptr<actors::metrics> stats = std::make_shared<actors::metrics>();
  std::shared_ptr<actors::service_health> health = std::make_shared<actors::service_health>();
  std::shared_ptr<actors::actor_directory> directory =
    std::make_shared<actors::actor_directory>(static_cast<std::size_t>(settings.storage.readers));
  std::shared_ptr<storage::backend> backend;  ///< where the records live (storage.backend)
  std::shared_ptr<storage::record_store> store;
  /// Verified tokens (filled by auth, read by every coordinator); one for the service's life.
  std::shared_ptr<actors::token_cache> tokens =
    std::make_shared<actors::token_cache>(static_cast<std::size_t>(settings.auth.token_cache_entries));

  // Declared before anything holding actor handles: destroyed last, after every handle is gone.
  std::unique_ptr<caf::actor_system_config> caf_config;
  std::unique_ptr<caf::actor_system> system;
  caf::actor supervisor;
  std::shared_ptr<const http::fault_injection> faults;  ///< set when admin.fault_injection is on

  net::io_context ioc;
  /// The public listener's connections: `http.event_loops()` loops of one thread each.
  std::unique_ptr<http::event_loops> loops;
  /// Drain and shutdown steps (signals, timers, the listeners' "drained"): one at a time, whichever
  /// of the `http.io_threads` I/O threads runs them.
  net::strand<net::io_context::executor_type> control{ioc.get_executor()};
  std::unique_ptr<net::signal_set> signals;
  std::unique_ptr<net::steady_timer> grace_timer;
  std::unique_ptr<net::steady_timer> drain_timer;  ///< `cluster.drain_delay_ms`: not ready, still serving
  std::unique_ptr<http::request_handler> api;
  std::unique_ptr<http::request_handler> admin;
  std::shared_ptr<http::listener_context> public_ctx;
  std::shared_ptr<http::listener_context> admin_ctx;
  std::shared_ptr<http::listener> public_listener;
  std::shared_ptr<http::listener> admin_listener;
  std::vector<std::pair<std::string, running_listener>> group_listeners;  ///< e.g. the embedded object store
  std::atomic<int> exit_code{0};
  std::atomic<bool> stopping{false};
  bool owns_process = false;  ///< `start(true)`: `contentlake serve`
  std::string node;           ///< this node's name
  std::shared_ptr<storage::lease_keeper> leases;  ///< this node's leases (given up after the actors stop)

  explicit impl(config::settings s) : settings(std::move(s)) {}

  /// What the route groups' spawning functions and listeners get.
  startup make_startup() {
    return startup{settings,
                   node,
                   store,
                   directory,
                   stats,
                   health,
                   tokens,
                   [this](int code) {
                     exit_code = code;
                     stop();
                   },
                   [this](const std::string& name) -> std::optional<std::uint16_t> {
                     for (const auto& [n, l] : group_listeners)
                       if (n == name) return l.port();
                     return std::nullopt;
                   },
                   owns_process,
                   leases,
                   backend};
  }

  /// Starts the actor system and, under one supervisor, every route group's actors; throws with
  /// the operator's message when a group's configuration is not usable.
  void spawn_actors() {
    caf_config = std::make_unique<caf::actor_system_config>();
    caf_config->set("scheduler.max-threads", settings.actors.scheduler_threads);
    // "sharing" measured better than work stealing on 2 cores (CAF notes, pitfall 7).
    caf_config->set("scheduler.policy", caf::atom("sharing"));
    system = std::make_unique<caf::actor_system>(*caf_config);

    directory->update([this](actors::concern_handles& h) {
      h.stats = stats;
      h.records = store;
    });
    auto context = make_startup();
    auto children = groups().spawn_all(context);
    if (!children) throw std::runtime_error(describe(children.error()));

    auto sup = std::make_shared<actors::supervisor_config>();
    sup->max_restarts = settings.supervisor.max_restarts;
    sup->window = std::chrono::seconds{settings.supervisor.window_seconds};
    sup->directory = directory;
    sup->stats = stats;
    sup->health = health;
    sup->give_up = [stop = context.stop](const std::string&) { stop(70); };
    sup->children = std::move(*children);
    if (auto err = actors::validate(*sup)) throw std::runtime_error(*err);
    supervisor = system->spawn(actors::supervisor, std::shared_ptr<const actors::supervisor_config>{sup});
    if (settings.admin_fault_injection) {
      auto f = std::make_shared<http::fault_injection>();
      for (const auto& child : sup->children) f->actors.push_back(child.name);
      f->kill = [target = caf::actor_cast<caf::weak_actor_ptr>(supervisor)](const std::string& name) {
        if (auto strong = target.lock()) caf::anon_send(caf::actor_cast<caf::actor>(strong), actors::fault_kill_atom_v, name);
      };
      f->delay = [target = caf::actor_cast<caf::weak_actor_ptr>(supervisor)](const std::string& name, int ms) {
        if (auto strong = target.lock())
          caf::anon_send(caf::actor_cast<caf::actor>(strong), actors::fault_delay_atom_v, name, ms);
      };
      faults = std::move(f);
      spdlog::warn("FAULT INJECTION is on (admin.fault_injection): POST /faults/kill and /faults/delay on the admin listener kill and delay actors");
    }
    // The supervisor publishes every child before it answers: after this, the directory is complete.
    caf::scoped_actor self{*system};
    bool ready = false;
    self->request(supervisor, std::chrono::seconds{10}, caf::get_atom_v)
      .receive([&](bool) { ready = true; }, [&](caf::error&) {});
    if (!ready) throw std::runtime_error("the supervisor did not start its actors");
  }

  std::shared_ptr<http::listener_context> make_context(const std::string& name, http::request_handler* handler,
                                                       bool counted) {
    auto ctx = std::make_shared<http::listener_context>();
    ctx->name = name;
    ctx->body_limit = settings.http.body_limit_bytes;
    ctx->header_limit = settings.http.header_limit_bytes;
    ctx->header_timeout = std::chrono::seconds{settings.http.header_timeout_seconds};
    ctx->idle_timeout = std::chrono::seconds{settings.http.idle_timeout_seconds};
    ctx->read_timeout = std::chrono::seconds{settings.http.read_timeout_seconds};
    ctx->min_body_bytes_per_second = settings.http.min_body_bytes_per_second;
    ctx->max_connections = settings.http.max_connections;
    ctx->recent_sign_in_seconds = settings.auth.recent_sign_in_seconds;
    ctx->access_log = settings.log.access && counted;
    ctx->handler = handler;
    ctx->stats = counted ? stats.get() : nullptr;
    // Through the io_context first: a session destroyed while it shuts down (after `control`, a
    // later member, is gone) only posts to it, which drops the handler unrun.
    ctx->on_drained = [this] {
      net::post(ioc, [this] { net::dispatch(control, [this] { maybe_finish_drain(); }); });
    };
    return ctx;
  }

  /// /readyz's `record_store` check: false while the store cannot be reached (PostgreSQL stopped or
  /// unreachable; probed again by the core group's supervised `store-probe`), and the backend's gauges.
  void watch_record_store() {
    auto reachable = health->declare_check("record_store", true);
    reachable->store(store->probe());
    // What the backend keeps (its pool, its caches), and on a shared one how far behind the change
    // log this node's caches are.
    // Each of the backend's series a gauge, or a counter moved on by what its running total grew.
    struct series {
      std::optional<actors::metrics::gauge> gauge;
      std::optional<actors::metrics::counter> counter;
      std::shared_ptr<double> counted = std::make_shared<double>(0);
    };
    std::vector<series> gauges;
    for (const auto& g : backend->status(*store)) {
      series one;
      if (g.total) one.counter = stats->declare_counter(g.name, g.help, g.labels);
      else one.gauge = stats->declare_gauge(g.name, g.help, g.labels);
      gauges.push_back(std::move(one));
    }
    std::optional<actors::metrics::gauge> lag;
    if (backend->traits().shared)
      lag = stats->declare_gauge("contentlake_change_log_lag_seconds",
                                 "How long ago this node last read the change log to its head: what other nodes "
                                 "changed since may be missing from its caches (past storage.postgresql.max_lag_ms "
                                 "they are passed by).");
    stats->on_render([gauges, lag, owner = std::weak_ptr<storage::backend>(backend),
                      weak = std::weak_ptr<storage::record_store>(store)] {
      auto s = weak.lock();
      auto b = owner.lock();
      if (!s || !b) return;
      if (lag) lag->set(static_cast<double>(s->log_lag().count()) / 1000.0);
      auto now = b->status(*s);
      for (std::size_t i = 0; i < now.size() && i < gauges.size(); ++i) {
        const auto& g = gauges[i];
        if (g.gauge) {
          g.gauge->set(now[i].value);
        } else if (now[i].value > *g.counted) {
          g.counter->increment(now[i].value - *g.counted);
          *g.counted = now[i].value;
        }
      }
    });
  }

  void watch_disk() {
    auto free = stats->declare_gauge("contentlake_disk_free_bytes",
                                     "Bytes free for the service on the data dir's file system (records, objects, "
                                     "search index); uploads and the search index fail when it is full.");
    auto size = stats->declare_gauge("contentlake_disk_size_bytes", "Size of the data dir's file system.");
    stats->on_render([free, size, dir = settings.data_dir] {
      struct statvfs fs {};
      if (::statvfs(dir.c_str(), &fs) != 0) return;
      free.set(static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize));
      size.set(static_cast<double>(fs.f_blocks) * static_cast<double>(fs.f_frsize));
    });
  }

  /// The heap at each scrape: bytes the service holds (allocated, not freed) apart from bytes the
  /// allocator keeps resident for reuse. Resident memory wobbles with the second; a leak shows in
  /// the first. The service binary links jemalloc (its statistics); the tests link glibc's malloc.
  void watch_heap() {
    auto used = stats->declare_gauge("contentlake_heap_in_use_bytes",
                                     "Heap bytes allocated and not freed.");
    auto kept = stats->declare_gauge("contentlake_heap_free_bytes",
                                     "Heap bytes resident but not in use: kept by the allocator for reuse.");
    stats->on_render([used, kept] {
      auto [in_use, resident] = heap_bytes();
      used.set(static_cast<double>(in_use));
      kept.set(static_cast<double>(resident > in_use ? resident - in_use : 0));
    });
  }

  static std::pair<std::size_t, std::size_t> heap_bytes() {
    if (mallctl != nullptr) {
      std::uint64_t epoch = 1;
      std::size_t size = sizeof epoch;
      mallctl("epoch", &epoch, &size, &epoch, size);  // refreshes the statistics below
      std::size_t allocated = 0, resident = 0;
      size = sizeof allocated;
      mallctl("stats.allocated", &allocated, &size, nullptr, 0);
      size = sizeof resident;
      mallctl("stats.resident", &resident, &size, nullptr, 0);
      return {allocated, resident};
    }
    auto m = ::mallinfo2();
    return {m.uordblks + m.hblkhd, m.uordblks + m.hblkhd + m.fordblks};
  }

  /// On PostgreSQL: says whether this node seals with the secrets the other nodes on the database use.
  void check_shared_secrets() {
    auto mine = storage::secrets_fingerprint(secrets_of(settings));
    auto recorded = backend->recorded_secrets_fingerprint(mine, !settings.secrets_file.empty());
    if (!recorded) return;
    if (*recorded == mine) {
      spdlog::info("secrets: fingerprint {}, the one recorded for the nodes on this database", mine);
      return;
    }
    spdlog::warn("secrets: this node's secrets (fingerprint {}) are not those recorded for the nodes on this database "
                 "({}): their page tokens, change-feed cursors and development tokens are refused here (400, 401), "
                 "and what this node seals (a webhook secret it stores) they cannot open. Give every node the same "
                 "secrets.file (`contentlake secrets init`)",
                 mine, *recorded);
  }

  /// Keeps this node's leases; `contentlake_lease_held{lease}` says which it holds.
  void keep_leases() {
    const auto& section = settings.groups.get<cluster_settings>();
    // Renewed by the cluster group's supervised `lease-keeper` (actors/ticker.hpp), not a thread.
    leases = std::make_shared<storage::lease_keeper>(backend->open_leases(), node, storage::lease::all(),
                                                     std::chrono::milliseconds{section.lease_ttl_ms}, false);
    std::vector<std::pair<std::string, actors::metrics::gauge>> held;
    for (const auto& name : storage::lease::all())
      held.emplace_back(name, stats->declare_gauge("contentlake_lease_held",
                                                   "1 while this node holds the lease of the work named (webhooks, "
                                                   "edge-purge, pruning, upload-expiry), else 0.",
                                                   {{"lease", name}}));
    stats->on_render([held, keeper = std::weak_ptr<storage::lease_keeper>(leases)] {
      if (auto k = keeper.lock())
        for (const auto& [name, gauge] : held) gauge.set(k->holds(name) ? 1 : 0);
    });
  }

  void start(bool handle_signals) {
    owns_process = handle_signals;
    std::filesystem::create_directories(settings.data_dir);
    dir_lock.emplace(settings.data_dir);
    node = node_name_of(settings);
    spdlog::info("node: {}", node);
    backend = storage::open_backend(settings);
    store = backend->open_records();
    check_shared_secrets();
    keep_leases();
    watch_record_store();
    watch_disk();
    watch_heap();
    auto cached = stats->declare_gauge("contentlake_token_cache_entries",
                                       "Verified tokens cached (at most about auth.token_cache_entries).");
    stats->on_render([cached, tokens = std::weak_ptr<actors::token_cache>(tokens)] {
      if (auto t = tokens.lock()) cached.set(static_cast<double>(t->size()));
    });
    // Group listeners bind first (nothing is served before ioc runs): their actors need their ports.
    auto started = groups().start_listeners(make_startup(), ioc);
    if (!started) throw std::runtime_error(describe(started.error()));
    group_listeners = std::move(*started);
    spawn_actors();
    auto page_tokens = std::make_shared<const domain::page_token_codec>(
      storage::load_or_create_secret(secrets_of(settings), "page-token.key"));
    http::public_api_settings api_settings;
    api_settings.timeout = std::chrono::milliseconds{settings.actors.ask_timeout_ms};
    api_settings.page_tokens = std::move(page_tokens);
    // The change feed's cursor key (the changes group opens the same file): lists answer `changes_cursor`.
    api_settings.feed_cursors = storage::feed_codec(secrets_of(settings), store->deployment_id());
    api_settings.idempotency_retention_ms = settings.idempotency.retention_seconds * 1000;
    api_settings.recent_sign_in_seconds = settings.auth.recent_sign_in_seconds;
    // The protected resource metadata (RFC 9728): its route and every 401 of the public listener.
    api_settings.metadata = std::make_shared<const http::resource_metadata>(
      settings.development_identity() ? std::string{storage::dev_issuer} : settings.auth.issuer,
      settings.groups.get<mcp_settings>().public_base_url);
    api = http::make_public_api(*system, groups().routes(), directory, api_settings);
    admin = http::make_admin_api(stats, health, faults);
    public_ctx = make_context("public", api.get(), true);
    public_ctx->metadata = api_settings.metadata;
    admin_ctx = make_context("admin", admin.get(), false);
    loops = std::make_unique<http::event_loops>(settings.http.event_loops(), settings.http.thread_slice_us);
    public_listener
      = std::make_shared<http::listener>(ioc, settings.listen.host, settings.listen.port, public_ctx, loops->loops());
    admin_listener = std::make_shared<http::listener>(ioc, settings.admin_listen.host, settings.admin_listen.port, admin_ctx);
    public_listener->run();
    admin_listener->run();
    if (handle_signals) {
      signals = std::make_unique<net::signal_set>(control, SIGINT, SIGTERM);
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
    if (signals) {
      boost::system::error_code ec;
      signals->cancel(ec);
    }
    // Behind a load balancer: /readyz fails first and the node goes on serving, so the balancer
    // stops sending before the node stops accepting (`cluster.drain_delay_ms`).
    auto delay = std::chrono::milliseconds{settings.groups.get<cluster_settings>().drain_delay_ms};
    if (delay.count() == 0) return close_listeners();
    spdlog::info("draining: not ready; serving {} ms more before closing the listeners", delay.count());
    drain_timer = std::make_unique<net::steady_timer>(control, delay);
    drain_timer->async_wait([this](const boost::system::error_code&) { close_listeners(); });
  }

  void close_listeners() {
    public_ctx->draining = true;
    admin_ctx->draining = true;
    public_listener->drain();
    admin_listener->drain();
    for (auto& [name, l] : group_listeners) l.stop();
    grace_timer = std::make_unique<net::steady_timer>(control, std::chrono::seconds{settings.http.shutdown_grace_seconds});
    grace_timer->async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      spdlog::warn("shutdown grace period over; closing remaining connections");
      public_listener->force_close();
      admin_listener->force_close();
    });
    maybe_finish_drain();
  }

  void maybe_finish_drain() {
    if (!stopping) return;
    for (const auto* ctx : {public_ctx.get(), admin_ctx.get()})
      if (ctx->connections > 0 || ctx->refusing > 0) return;
    if (grace_timer) grace_timer->cancel();
  }

  void stop() {
    net::post(control, [this] { begin_drain(); });
  }

  int run() {
    std::vector<std::thread> extra;
    if (loops) {
      loops->start();
      spdlog::info("event loops (http.threads): {}; http.io_threads: {}", loops->loops().size(), settings.http.io_threads);
      if (settings.http.thread_slice_us > 0 && loops->slice_us() == 0)
        spdlog::info("http.thread_slice_us: this kernel keeps no slice per thread (Linux 6.12 and later do); "
                     "the event loops run on its default");
    }
    for (int i = 1; i < settings.http.io_threads; ++i) extra.emplace_back([this] { ioc.run(); });
    ioc.run();
    // Every public connection has ended (the drain waits for them) or was closed at the grace
    // period's end: the loops finish what is queued on them, and return.
    if (loops) loops->finish();
    for (auto& t : extra) t.join();
    shutdown_actors();
    // The leased work stops with the actors: the other nodes take it at their next claim.
    if (leases) leases->stop();
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
    if (leases) leases->stop();  // a service destroyed without `run`
  }
};

service::service(config::settings settings) : impl_(std::make_unique<impl>(std::move(settings))) {
  impl_->stats->set_build_info({{"version", std::string{build_version()}},
                                {"commit", std::string{build_commit()}},
                                {"record_format", std::to_string(record_store_format())},
                                {"index_format", std::string{search_index_format()}}});
}

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

const storage::record_store& service::store() const {
  return *impl_->store;
}

std::optional<std::uint16_t> service::listener_port(const std::string& name) const {
  return impl_->make_startup().listener_port(name);
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

}  // namespace cl::app
