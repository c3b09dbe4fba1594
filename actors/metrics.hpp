#pragma once
/// The service's Prometheus metrics behind a narrow interface, so prometheus-cpp stays out of
/// widely included headers. Every method is safe from any thread.

#include <atomic>
#include <cstdint>
#include <map>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace prometheus {
class Counter;
class Gauge;
}  // namespace prometheus

namespace cl::actors {

/// Counters of the write path, kept by the writer actor (shared with metrics and benchmarks).
struct writer_stats {
  std::atomic<std::uint64_t> groups{0};     ///< transactions committed (one fsync each)
  std::atomic<std::uint64_t> mutations{0};  ///< mutations those transactions carried
};

class metrics {
public:
  /// A gauge a route group declares from its own files; a default one sets nothing.
  class gauge {
  public:
    gauge() = default;
    void set(double value) const;

  private:
    friend class metrics;
    explicit gauge(prometheus::Gauge* g) : g_(g) {}
    prometheus::Gauge* g_ = nullptr;
  };
  /// A counter a route group declares from its own files; a default one counts nothing.
  class counter {
  public:
    counter() = default;
    void increment(double by = 1) const;

  private:
    friend class metrics;
    explicit counter(prometheus::Counter* c) : c_(c) {}
    prometheus::Counter* c_ = nullptr;
  };

  metrics();
  ~metrics();
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  /// One finished HTTP request on the public listener.
  void observe_request(std::string_view route, std::string_view method, int status, double seconds);

  /// Makes `actor`'s restart counter visible at 0 before its first restart.
  void declare_actor(std::string_view actor);

  /// A concern actor was restarted by the supervisor.
  void count_restart(std::string_view actor);

  /// A concern actor began holding its messages for an injected delay (fault injection).
  void count_fault_delay(std::string_view actor);

  /// A request was refused by the rate limiter.
  void count_rate_limited();

  /// Idempotency-Key outcomes: `outcome` is replay, in_use (409) or mismatch (422).
  void count_idempotency(std::string_view outcome);

  /// A concern actor did not answer a plan: `kind` is a `backend_error` name.
  void count_backend_error(std::string_view concern, std::string_view kind);

  /// `contentlake_build_info{version, commit, record_format, index_format} 1`: what is running.
  void set_build_info(const std::map<std::string, std::string>& labels);

  /// Records currently in the idempotency ledger.
  void set_ledger_entries(std::size_t n);
  /// The record store's size: bytes in use and the most it may hold (`storage.map_size_mib`).
  void set_storage_space(std::uint64_t used, std::uint64_t limit);

  /// Declares gauge `name` (`contentlake_<group>_...`) with `help` and the series of `labels`;
  /// declared again with the same labels, the same one.
  gauge declare_gauge(const std::string& name, const std::string& help,
                      const std::map<std::string, std::string>& labels = {});
  /// Declares counter `name` with `help` and the series of `labels` (declared at 0); a name
  /// declared again with other labels is another series of the same family.
  counter declare_counter(const std::string& name, const std::string& help,
                          const std::map<std::string, std::string>& labels = {});

  /// Open public connections changed by `delta`.
  void add_connections(int delta);

  /// Reports `writes` (read at each scrape) as the storage commit counters.
  void watch_writes(std::shared_ptr<const writer_stats> writes);

  /// Runs `refresh` before each rendering (gauges read from outside at scrape time: disk space);
  /// it must be cheap and must not render.
  void on_render(std::function<void()> refresh);

  /// Prometheus text exposition format of everything above.
  std::string render() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cl::actors
