#pragma once
/// The route groups. Each lives in its own app/<group>_group.cpp and adds its routes, its
/// configuration section and its supervised actors to the registry; `build_registry` calls them
/// in the order docs/api.md lists the routes.

#include "app/registry.hpp"

namespace cl::app {

/// The platform every group builds on: auth, rate limiting, the readers and the writer, the
/// idempotency ledger and the rights resolver.
void register_core(registry& r);
/// The API's description of itself: the OpenAPI document and the browsable reference (no token).
void register_reference(registry& r);
/// Resources, their versions, entities and content units.
void register_resources(registry& r);
/// Access grants on Resources (layer 2) and the group directory.
void register_access(registry& r);
/// Works (with promotion of staged Resources), Sources and Activities.
void register_catalog(registry& r);
/// Contracts and their versions (a preview addition).
void register_contracts(registry& r);
/// Blobs: the embedded S3-compatible object store (the broker and its routes come next).
void register_blobs(registry& r);
/// Search (POST /v0/content-lake/search): the indexer and the search sessions.
void register_search(registry& r);
/// The change feed (GET /v0/content-lake/changes).
void register_changes(registry& r);
/// Signed webhooks of the change feed's events (/v0/content-lake/webhooks...).
void register_webhooks(registry& r);
/// The edge purger: purges edge caches (Varnish, deploy/edge/) from the change log; no routes.
void register_edge(registry& r);
/// The MCP endpoint (POST /v0/mcp) and the protected resource metadata.
void register_mcp(registry& r);

/// The cluster's section (`cluster.*`: leases, the shared rate limit); no routes.
void register_cluster(registry& r);

/// Every group registered, built once; pure (nothing starts), so tests read its routes and options.
const registry& groups();

}  // namespace cl::app
