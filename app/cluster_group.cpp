// The cluster's section: no routes, no actors of its own; the composition root keeps the leases
// (app/service.cpp) and the core group shares the rate limit (app/core_group.cpp).
//
// Work done once among the nodes, and the shared rate limit (docs/architecture.md, "Work done once among the nodes"):
//
// Each is covered by a lease (`storage/leases.hpp`: `webhooks`, `edge-purge`, `pruning`,
// `upload-expiry`), a row in PostgreSQL taken by an upsert that succeeds only for its holder or once
// its holder's time lapsed (`expires_at`, the database's clock: nodes' clocks need not agree). Each
// node's `lease_keeper` thread claims every lease it keeps every third of `cluster.lease_ttl_ms`
// (10 s), and counts one held only until the time to live, less a sixth, from when its last successful
// claim was sent: a node cut off from the database, or whose keeper is stuck, stops the work before
// another can take it. A node that stops gives its leases up after its actors stop (the others take
// them at their next claim); one that dies is taken over once its lease lapses, within the time to
// live plus a third (13.3 s by default). Rows rather than advisory locks: a lock held by a pooled
// connection is lost silently with the connection and ties the lease to one connection's health.
//
// The actors doing the work run on every node and check `holds(lease)` before each round: a node
// without the lease does nothing; one that takes it (again) starts afresh from the store, as at a
// start (the webhook dispatcher from each endpoint's stored cursor, the edge purger from its
// consumer position with a purge of everything). What the previous holder sent but had not recorded
// is sent again, with the same `webhook-id` (deliveries are at least once). An endpoint created or
// changed through another node is read by the delivering node within a second (it reads the enabled
// endpoints every second on PostgreSQL; on one node a plan wakes it). The search-session sweep keeps
// its advisory lock per sweep: every node's sweeper tries on its own interval, so nothing needs
// taking over.
//
// The rate limit is per client on whichever node a request lands (spec 8): each node keeps its token
// buckets, and every `cluster.rate_limit_share_ms` (100 ms) a thread of its rate limiter adds what it
// admitted to a per-node tally in PostgreSQL and reads the other nodes' tallies changed since (one
// statement), charging their growth to its own buckets (down to minus the burst). Each node's buckets
// then track one cluster-wide bucket, late by one interval: the tolerance is what the other nodes
// admit in that interval before this node is charged (docs/operations.md, "Several nodes").

#include "app/cluster_group.hpp"
#include "app/groups.hpp"

#include "actors/ticker.hpp"
#include "storage/leases.hpp"

namespace cl::app {

namespace {

/// The leases' renewal, every third of their time to live: a supervised ticker. While it is away
/// (killed, restarting) this node's leases lapse after their time to live and another node takes
/// the work; restarted, it claims them again (a new term: the work starts afresh from the store).
caf::expected<std::vector<actors::child_spec>> spawn_lease_keeper(const startup& s) {
  if (!s.leases) return std::vector<actors::child_spec>{};
  return std::vector<actors::child_spec>{actors::supervised_ticker(
    "lease-keeper",
    [keeper = s.leases] {
      keeper->renew();
      return keeper->renew_every();
    },
    s.leases->renew_every())};
}

}  // namespace

void register_cluster(registry& r) {
  r.add_actors("lease_keeper", &spawn_lease_keeper);
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
