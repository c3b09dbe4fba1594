#pragma once
// A reader mailbox for actor tests: the caller supplies how a Resource fetch is answered; every
// other read finds nothing (each read kind of the reader interface, in one place).

#include "actors/interfaces.hpp"

#include <caf/typed_behavior.hpp>

namespace cl::testing {

template <class ResourceFetch>
actors::reader_actor::behavior_type reader_finding_nothing_else(ResourceFetch resource_fetch) {
  using namespace cl::actors;
  using namespace cl::storage;
  return {
    std::move(resource_fetch),
    [](fetch_atom, const version_ref&) { return fetch_outcome{false, {}}; },
    [](fetch_atom, const record_ref&) { return fetch_outcome{false, {}}; },
    [](fetch_atom, const activity_ref&) { return fetch_outcome{false, {}}; },
    [](list_atom, const version_query&) { return scan_result{}; },
    [](list_atom, const catalog_query&) { return scan_result{}; },
    [](fetch_atom, const grant_ref&) { return fetch_outcome{false, {}}; },
    [](list_atom, const grant_query&) { return scan_result{}; },
    [](list_atom, const resource_query&) { return scan_result{}; },
    [](list_atom, const activity_query&) { return scan_result{}; },
  };
}

}  // namespace cl::testing
