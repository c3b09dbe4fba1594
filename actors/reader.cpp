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

}  // namespace

reader_actor::behavior_type reader(reader_actor::stateful_pointer<reader_state>,
                                   std::shared_ptr<storage::record_store> store) {
  return {
    [store](fetch_atom, const std::string& tenant, const std::string& id) -> caf::result<fetch_outcome> {
      try {
        auto json = store->get_resource(tenant, id);
        if (!json) return fetch_outcome{false, {}};
        return fetch_outcome{true, std::move(*json)};
      } catch (const std::exception& e) {
        return storage_failure(e);
      }
    },
    [store](caf::get_atom, storage::table t, const std::string& key) -> caf::result<fetch_outcome> {
      try {
        auto json = store->get(t, key);
        if (!json) return fetch_outcome{false, {}};
        return fetch_outcome{true, std::move(*json)};
      } catch (const std::exception& e) {
        return storage_failure(e);
      }
    },
    [store](scan_atom, storage::table t, const std::string& prefix, const std::string& after, std::size_t limit,
            const record_filter& keep) -> caf::result<scan_result> {
      try {
        // A bounded budget keeps one request from walking a whole table for a rare match.
        auto page = store->scan_matching(t, prefix, after, limit, keep, 10000);
        return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted};
      } catch (const std::exception& e) {
        return storage_failure(e);
      }
    },
    [store](fetch_atom, const storage::grant_ref& g) -> caf::result<fetch_outcome> {
      try {
        auto json = store->grants().grant(g.tenant, g.resource_id, g.principal);
        if (!json) return fetch_outcome{false, {}};
        return fetch_outcome{true, std::move(*json)};
      } catch (const std::exception& e) {
        return storage_failure(e);
      }
    },
    [store](list_atom, const storage::grant_query& q) -> caf::result<scan_result> {
      try {
        auto page = store->grants().on_resource(q);
        return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted};
      } catch (const std::exception& e) {
        return storage_failure(e);
      }
    },
    [store](list_atom, const storage::resource_query& q) -> caf::result<scan_result> {
      try {
        auto page = store->list_resources(q);
        return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted};
      } catch (const std::exception& e) {
        return storage_failure(e);
      }
    },
    [store](list_atom, const storage::activity_query& q) -> caf::result<scan_result> {
      try {
        auto page = store->list_activities(q);
        return scan_result{std::move(page.entries), std::move(page.resume_after), page.exhausted};
      } catch (const std::exception& e) {
        return storage_failure(e);
      }
    },
  };
}

}  // namespace cl::actors
