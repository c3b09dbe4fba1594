#pragma once
/// The service's Prometheus metrics behind a narrow interface, so prometheus-cpp stays out of
/// widely included headers. Every method is safe from any thread.

#include <memory>
#include <string>
#include <string_view>

namespace cl::actors {

class metrics {
public:
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

  /// A request was refused by the rate limiter.
  void count_rate_limited();

  /// Open public connections changed by `delta`.
  void add_connections(int delta);

  /// Prometheus text exposition format of everything above.
  std::string render() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cl::actors
