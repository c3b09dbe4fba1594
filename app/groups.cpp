#include "app/groups.hpp"

namespace cl::app {

const registry& groups() {
  static const registry all = [] {
    registry r;
    // The registration list: one line per route group.
    register_core(r);
    register_reference(r);
    register_resources(r);
    register_access(r);
    register_catalog(r);
    register_contracts(r);
    register_blobs(r);
    register_search(r);
    register_changes(r);
    register_webhooks(r);
    register_edge(r);
    register_mcp(r);
    register_cluster(r);
    return r;
  }();
  return all;
}

}  // namespace cl::app
