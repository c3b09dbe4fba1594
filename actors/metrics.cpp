#include "actors/metrics.hpp"
#include "actors/backend_error.hpp"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <sstream>

namespace cl::actors {

namespace {

/// The writer's counters, read when scraped.
class write_counters final : public prometheus::Collectable {
public:
  explicit write_counters(std::shared_ptr<const writer_stats> writes) : writes_(std::move(writes)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    auto family = [](const char* name, const char* help, std::uint64_t value) {
      prometheus::MetricFamily f;
      f.name = name;
      f.help = help;
      f.type = prometheus::MetricType::Counter;
      prometheus::ClientMetric m;
      m.counter.value = static_cast<double>(value);
      f.metric.push_back(m);
      return f;
    };
    return {family("contentlake_storage_commits_total",
                   "Write transactions committed durably (one fsync each; group commit puts many mutations in one).",
                   writes_->groups.load()),
            family("contentlake_storage_mutations_total", "Mutations carried by those transactions.",
                   writes_->mutations.load())};
  }

private:
  std::shared_ptr<const writer_stats> writes_;
};

}  // namespace

struct metrics::impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  /// The series of every (route, method, status) and route seen: a family's `Add` builds and
  /// hashes a label map per call, these look the series up by one string. A family keeps its series
  /// for its life, so the pointers stay valid.
  /// Shared by lookups (every request), taken alone only to add a series (once per route, method and
  /// status): requests on two threads never wait for each other here.
  std::shared_mutex series_mutex;
  std::unordered_map<std::string, std::pair<prometheus::Counter*, prometheus::Histogram*>> series;
  prometheus::Family<prometheus::Counter>& requests =
    prometheus::BuildCounter()
      .Name("contentlake_http_requests_total")
      .Help("Requests answered on the public listener, by route template, method and status.")
      .Register(*registry);
  prometheus::Family<prometheus::Histogram>& latency =
    prometheus::BuildHistogram()
      .Name("contentlake_http_request_duration_seconds")
      .Help("Time from a complete request to its response being handed to the socket, by route template.")
      .Register(*registry);
  prometheus::Family<prometheus::Counter>& restarts =
    prometheus::BuildCounter()
      .Name("contentlake_actor_restarts_total")
      .Help("Concern actors restarted by the supervisor, by actor.")
      .Register(*registry);
  prometheus::Family<prometheus::Counter>& fault_delays =
    prometheus::BuildCounter()
      .Name("contentlake_fault_delays_total")
      .Help("Injected delays (POST /faults/delay) an actor began holding its messages for, by actor.")
      .Register(*registry);
  prometheus::Counter& rate_limited =
    prometheus::BuildCounter()
      .Name("contentlake_rate_limited_total")
      .Help("Requests refused with 429 RATE_LIMITED.")
      .Register(*registry)
      .Add({});
  prometheus::Gauge& connections =
    prometheus::BuildGauge()
      .Name("contentlake_http_connections")
      .Help("Open connections on the public listener.")
      .Register(*registry)
      .Add({});
  prometheus::Family<prometheus::Counter>& idempotency =
    prometheus::BuildCounter()
      .Name("contentlake_idempotency_total")
      .Help("Requests with an Idempotency-Key answered from the ledger: replay (a stored answer), in_use (409, the "
            "first request still executing), mismatch (422, the key was used for another request).")
      .Register(*registry);
  prometheus::Family<prometheus::Counter>& backend_errors =
    prometheus::BuildCounter()
      .Name("contentlake_backend_errors_total")
      .Help("Requests a concern actor did not answer, by concern and kind: storage_failure, timeout, gone "
            "(restarting), refused, other (503 BACKEND_UNAVAILABLE), storage_full (507), unstorable (400).")
      .Register(*registry);
  prometheus::Family<prometheus::Gauge>& build_info =
    prometheus::BuildGauge()
      .Name("contentlake_build_info")
      .Help("Always 1; its labels say what runs: version, commit, and the data formats it reads and writes.")
      .Register(*registry);
  prometheus::Gauge& storage_used =
    prometheus::BuildGauge()
      .Name("contentlake_storage_used_bytes")
      .Help("Bytes the record store (LMDB) uses; at storage_limit_bytes writes get 507 STORAGE_FULL.")
      .Register(*registry)
      .Add({});
  prometheus::Gauge& storage_limit =
    prometheus::BuildGauge()
      .Name("contentlake_storage_limit_bytes")
      .Help("The most the record store may hold (storage.map_size_mib).")
      .Register(*registry)
      .Add({});
  prometheus::Gauge& ledger_entries =
    prometheus::BuildGauge()
      .Name("contentlake_idempotency_ledger_entries")
      .Help("Records in the idempotency ledger (pruned after idempotency.retention_seconds).")
      .Register(*registry)
      .Add({});
  /// Families route groups declared, by name.
  std::mutex declared_mutex;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counters;
  std::shared_ptr<write_counters> writes;
  std::vector<std::function<void()>> refreshes;  ///< guarded by declared_mutex
};

metrics::metrics() : impl_(std::make_unique<impl>()) {
  // Counters start at 0: a series that appears only with its first error cannot be rated or alerted on.
  for (auto concern : backend_concerns)
    for (auto kind : backend_error_kinds)
      impl_->backend_errors.Add({{"concern", std::string{concern}}, {"kind", std::string{backend_error_name(kind)}}});
}

metrics::~metrics() = default;

void metrics::observe_request(std::string_view route, std::string_view method, int status, double seconds) {
  static const prometheus::Histogram::BucketBoundaries buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                                0.05,   0.1,   0.25,   0.5,   1,    2.5, 5};
  std::string key;
  key.reserve(route.size() + method.size() + 6);
  key.append(route).push_back('\0');
  key.append(method).push_back('\0');
  key += std::to_string(status);
  std::pair<prometheus::Counter*, prometheus::Histogram*> handles{};
  {
    std::shared_lock guard{impl_->series_mutex};
    if (auto found = impl_->series.find(key); found != impl_->series.end()) handles = found->second;
  }
  if (!handles.first) {
    std::lock_guard guard{impl_->series_mutex};
    auto found = impl_->series.find(key);
    if (found == impl_->series.end()) {
      std::string r{route};
      auto* counter = &impl_->requests.Add({{"route", r}, {"method", std::string{method}}, {"status", std::to_string(status)}});
      auto* histogram = &impl_->latency.Add({{"route", r}}, buckets);
      found = impl_->series.emplace(std::move(key), std::make_pair(counter, histogram)).first;
    }
    handles = found->second;
  }
  handles.first->Increment();
  handles.second->Observe(seconds);
}

void metrics::declare_actor(std::string_view actor) {
  impl_->restarts.Add({{"actor", std::string{actor}}});
}

void metrics::count_restart(std::string_view actor) {
  impl_->restarts.Add({{"actor", std::string{actor}}}).Increment();
}

void metrics::count_fault_delay(std::string_view actor) {
  impl_->fault_delays.Add({{"actor", std::string{actor}}}).Increment();
}

void metrics::count_rate_limited() {
  impl_->rate_limited.Increment();
}

void metrics::count_idempotency(std::string_view outcome) {
  impl_->idempotency.Add({{"outcome", std::string{outcome}}}).Increment();
}

void metrics::count_backend_error(std::string_view concern, std::string_view kind) {
  impl_->backend_errors.Add({{"concern", std::string{concern}}, {"kind", std::string{kind}}}).Increment();
}

void metrics::set_build_info(const std::map<std::string, std::string>& labels) { impl_->build_info.Add(labels).Set(1); }

void metrics::set_storage_space(std::uint64_t used, std::uint64_t limit) {
  impl_->storage_used.Set(static_cast<double>(used));
  impl_->storage_limit.Set(static_cast<double>(limit));
}

void metrics::set_ledger_entries(std::size_t n) {
  impl_->ledger_entries.Set(static_cast<double>(n));
}

void metrics::gauge::set(double value) const {
  if (g_) g_->Set(value);
}

void metrics::counter::increment(double by) const {
  if (c_) c_->Increment(by);
}

metrics::gauge metrics::declare_gauge(const std::string& name, const std::string& help,
                                      const std::map<std::string, std::string>& labels) {
  std::lock_guard lock{impl_->declared_mutex};
  auto& family = impl_->gauges[name];
  if (!family) family = &prometheus::BuildGauge().Name(name).Help(help).Register(*impl_->registry);
  return gauge{&family->Add(labels)};
}

metrics::counter metrics::declare_counter(const std::string& name, const std::string& help,
                                          const std::map<std::string, std::string>& labels) {
  std::lock_guard lock{impl_->declared_mutex};
  auto& family = impl_->counters[name];
  if (!family) family = &prometheus::BuildCounter().Name(name).Help(help).Register(*impl_->registry);
  return counter{&family->Add(labels)};
}

void metrics::add_connections(int delta) {
  impl_->connections.Increment(delta);
}

void metrics::watch_writes(std::shared_ptr<const writer_stats> writes) {
  impl_->writes = std::make_shared<write_counters>(std::move(writes));
}

void metrics::on_render(std::function<void()> refresh) {
  std::lock_guard<std::mutex> guard{impl_->declared_mutex};
  impl_->refreshes.push_back(std::move(refresh));
}

std::string metrics::render() const {
  {
    std::lock_guard<std::mutex> guard{impl_->declared_mutex};
    for (const auto& refresh : impl_->refreshes) refresh();
  }
  std::ostringstream out;
  auto families = impl_->registry->Collect();
  if (impl_->writes)
    for (auto& f : impl_->writes->Collect()) families.push_back(std::move(f));
  prometheus::TextSerializer{}.Serialize(out, families);
  return out.str();
}

}  // namespace cl::actors
