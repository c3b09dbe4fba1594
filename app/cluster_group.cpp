// The cluster's section: no routes, no actors of its own; the composition root keeps the leases
// (app/service.cpp) and the core group shares the rate limit (app/core_group.cpp).

#include "app/cluster_group.hpp"
#include "app/groups.hpp"

namespace cl::app {

void register_cluster(registry& r) {
  r.add_options({
    {"cluster.lease_ttl_ms", "10000",
     "How long a node holds the lease of work done once among the nodes on one database (webhook delivery, edge "
     "purges, pruning, the expiry of uploads) without renewing it; renewed every third of it. A node that dies hands "
     "its work over within this plus a third. Only matters on PostgreSQL.",
     config::integer_member(&cluster_settings::lease_ttl_ms, 300, 600000)},
    {"cluster.rate_limit_share_ms", "100",
     "How often each node's rate limiter adds what it admitted to the tally the nodes share, and charges what the "
     "others admitted. A client bursting through N nodes is admitted at most its quota plus what the others admitted "
     "within one such interval (docs/operations.md). Only matters on PostgreSQL.",
     config::integer_member(&cluster_settings::rate_limit_share_ms, 10, 60000)},
    {"cluster.drain_delay_ms", "0",
     "At SIGTERM, how long /readyz answers 503 while the node still accepts and serves requests, before it closes its "
     "listeners and drains: behind a load balancer, longer than the balancer takes to mark it down (deploy/cluster: "
     "3000); 0: close at once (one node).",
     config::integer_member(&cluster_settings::drain_delay_ms, 0, 600000)},
  });
}

}  // namespace cl::app
