#pragma once
/// How actors that read the typed stores answer: a storage failure becomes an error (503
/// upstream, logged once here), never "not found"; records and pages become reply values.

#include "actors/backend_error.hpp"
#include "actors/type_ids.hpp"
#include "storage/stores.hpp"

#include <caf/error.hpp>
#include <caf/result.hpp>
#include <caf/sec.hpp>
#include <spdlog/spdlog.h>

#include <optional>
#include <string>

namespace cl::actors {

/// Runs `read` for actor `who`; a storage exception becomes an error.
template <class Read>
auto read_or_fail(const char* who, Read read) -> caf::result<decltype(read())> {
  try {
    return read();
  } catch (const std::exception& e) {
    return storage_error(who, e);
  }
}

/// A record read, as a reply.
inline fetch_outcome found(std::optional<std::string> json) {
  if (!json) return fetch_outcome{false, {}};
  return fetch_outcome{true, std::move(*json)};
}

/// A page of a typed query, as a reply, with the change-log position read before it: the page is
/// at least that recent, so a client that follows the change feed from there misses nothing.
template <class List>
scan_result listed(const storage::record_store& store, List list) {
  auto at = store.known_change();
  storage::record_page page = list();
  return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted, at};
}

}  // namespace cl::actors
