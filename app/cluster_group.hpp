#pragma once
/// The `cluster.*` section: how the nodes on one database share work (leases) and the rate limit.
/// On one node (LMDB) the node holds every lease and shares nothing.

#include <cstdint>

namespace cl::app {

struct cluster_settings {
  /// How long a lease is held without renewal: a node that dies hands its leased work over
  /// within this plus a third of it (renewed every third).
  std::int64_t lease_ttl_ms = 10000;
  /// How often each node's rate limiter shares its admissions with the other nodes'.
  std::int64_t rate_limit_share_ms = 100;
  /// At SIGTERM, how long /readyz fails while the node still serves, before it stops accepting.
  std::int64_t drain_delay_ms = 0;
};

}  // namespace cl::app
