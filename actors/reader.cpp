#include "actors/reader.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace cl::actors {

namespace {

/// A storage failure is the backend being unavailable, not a missing record.
caf::error storage_failure(const std::exception& e) {
  spdlog::error("reader: read failed: {}", e.what());
  return caf::make_error(caf::sec::runtime_error, "storage read failed");
}

/// Runs `read`; a storage failure becomes an error (503 upstream), never "not found".
template <class Read>
auto read_or_fail(Read read) -> caf::result<decltype(read())> {
  try {
    return read();
  } catch (const std::exception& e) {
    return storage_failure(e);
  }
}

fetch_outcome found(std::optional<std::string> json) {
  if (!json) return fetch_outcome{false, {}};
  return fetch_outcome{true, std::move(*json)};
}

scan_result page_of(storage::record_page page) {
  return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted};
}

}  // namespace

reader_actor::behavior_type reader(reader_actor::stateful_pointer<reader_state>,
                                   std::shared_ptr<storage::record_store> store) {
  return {
    [store](fetch_atom, const std::string& tenant, const std::string& id) -> caf::result<fetch_outcome> {
      return read_or_fail([&] { return found(store->resources().get(tenant, id)); });
    },
    [store](fetch_atom, const storage::version_ref& v) -> caf::result<fetch_outcome> {
      return read_or_fail([&] { return found(store->resources().version(v.tenant, v.resource_id, v.version)); });
    },
    [store](fetch_atom, const storage::record_ref& r) -> caf::result<fetch_outcome> {
      return read_or_fail([&] { return found(store->catalog().get(r.kind, r.tenant, r.id)); });
    },
    [store](fetch_atom, const storage::activity_ref& a) -> caf::result<fetch_outcome> {
      return read_or_fail([&] { return found(store->activities().get(a.tenant, a.id)); });
    },
    [store](fetch_atom, const storage::grant_ref& g) -> caf::result<fetch_outcome> {
      return read_or_fail([&] { return found(store->grants().grant(g.tenant, g.resource_id, g.principal)); });
    },
    [store](list_atom, const storage::grant_query& q) -> caf::result<scan_result> {
      return read_or_fail([&] { return page_of(store->grants().on_resource(q)); });
    },
    [store](list_atom, const storage::resource_query& q) -> caf::result<scan_result> {
      return read_or_fail([&] { return page_of(store->resources().list(q)); });
    },
    [store](list_atom, const storage::activity_query& q) -> caf::result<scan_result> {
      return read_or_fail([&] { return page_of(store->activities().list(q)); });
    },
    [store](list_atom, const storage::version_query& q) -> caf::result<scan_result> {
      return read_or_fail([&] { return page_of(store->resources().versions(q)); });
    },
    [store](list_atom, const storage::catalog_query& q) -> caf::result<scan_result> {
      return read_or_fail([&] { return page_of(store->catalog().list(q)); });
    },
  };
}

}  // namespace cl::actors
