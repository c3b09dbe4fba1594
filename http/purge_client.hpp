#pragma once
/// The HTTP client of edge purges (issue 29, part 3): one `PURGE` request to an edge cache the
/// operator configured (`edge.purge_urls`), carrying the keys to purge and the shared secret, and
/// whether the edge answered 200. The edges are the operator's own (loopback or a configured
/// network), so unlike webhook deliveries no address policy applies; plain `http` only (an edge
/// listens for purges beside its cache, deploy/edge/). Blocking: the purger runs it on its own
/// thread; app/ hands it to the purger (actors/ never includes http/).

#include "domain/edge_purge.hpp"

namespace cl::http {

/// Sends `r`; what came of it.
domain::purge_response send_purge(const domain::purge_request& r);

}  // namespace cl::http
