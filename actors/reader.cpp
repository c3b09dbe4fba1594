#include "actors/reader.hpp"
#include "actors/fault_hooks.hpp"

#include "actors/store_reads.hpp"

#include <caf/all.hpp>

namespace cl::actors {

reader_actor::behavior_type reader(reader_actor::stateful_pointer<reader_state> self,
                                   std::shared_ptr<storage::record_store> store) {
  accept_fault_delays(self);
  return {
    [store](fetch_atom, const std::string& tenant, const std::string& id) -> caf::result<fetch_outcome> {
      return read_or_fail("reader", [&] {
        auto at = store->known_change();  // before the read: the record is at least that recent
        auto out = found(store->resources().get(tenant, id));
        out.log_position = at;
        return out;
      });
    },
    [store](fetch_atom, const storage::version_ref& v) -> caf::result<fetch_outcome> {
      return read_or_fail("reader", [&] { return found(store->resources().version(v.tenant, v.resource_id, v.version)); });
    },
    [store](fetch_atom, const storage::record_ref& r) -> caf::result<fetch_outcome> {
      return read_or_fail("reader", [&] { return found(store->catalog().get(r.kind, r.tenant, r.id)); });
    },
    [store](fetch_atom, const storage::activity_ref& a) -> caf::result<fetch_outcome> {
      return read_or_fail("reader", [&] { return found(store->activities().get(a.tenant, a.id)); });
    },
    [store](fetch_atom, const storage::grant_ref& g) -> caf::result<fetch_outcome> {
      return read_or_fail("reader", [&] { return found(store->grants().grant(g.tenant, g.resource_id, g.principal)); });
    },
    [store](list_atom, const storage::grant_query& q) -> caf::result<scan_result> {
      return read_or_fail("reader", [&] { return listed(*store, [&] { return store->grants().on_resource(q); }); });
    },
    [store](list_atom, const storage::resource_query& q) -> caf::result<scan_result> {
      return read_or_fail("reader", [&] { return listed(*store, [&] { return store->resources().list(q); }); });
    },
    [store](list_atom, const storage::activity_query& q) -> caf::result<scan_result> {
      return read_or_fail("reader", [&] { return listed(*store, [&] { return store->activities().list(q); }); });
    },
    [store](list_atom, const storage::version_query& q) -> caf::result<scan_result> {
      return read_or_fail("reader", [&] { return listed(*store, [&] { return store->resources().versions(q); }); });
    },
    [store](list_atom, const storage::catalog_query& q) -> caf::result<scan_result> {
      return read_or_fail("reader", [&] { return listed(*store, [&] { return store->catalog().list(q); }); });
    },
  };
}

reader_actor::behavior_type reader_front(reader_actor::pointer self, std::vector<reader_actor> workers) {
  accept_fault_delays(self);  // a delay holds every message of the front (the whole concern)
  for (const auto& w : workers) self->link_to(w);
  auto next = [workers, turn = std::make_shared<std::size_t>(0)] { return workers[(*turn)++ % workers.size()]; };
  return {
    [self, next](fetch_atom, std::string& tenant, std::string& id) -> caf::result<fetch_outcome> {
      return self->delegate(next(), fetch_atom_v, std::move(tenant), std::move(id));
    },
    [self, next](fetch_atom, storage::version_ref& v) -> caf::result<fetch_outcome> {
      return self->delegate(next(), fetch_atom_v, std::move(v));
    },
    [self, next](fetch_atom, storage::record_ref& r) -> caf::result<fetch_outcome> {
      return self->delegate(next(), fetch_atom_v, std::move(r));
    },
    [self, next](fetch_atom, storage::activity_ref& a) -> caf::result<fetch_outcome> {
      return self->delegate(next(), fetch_atom_v, std::move(a));
    },
    [self, next](fetch_atom, storage::grant_ref& g) -> caf::result<fetch_outcome> {
      return self->delegate(next(), fetch_atom_v, std::move(g));
    },
    [self, next](list_atom, storage::grant_query& q) -> caf::result<scan_result> {
      return self->delegate(next(), list_atom_v, std::move(q));
    },
    [self, next](list_atom, storage::resource_query& q) -> caf::result<scan_result> {
      return self->delegate(next(), list_atom_v, std::move(q));
    },
    [self, next](list_atom, storage::activity_query& q) -> caf::result<scan_result> {
      return self->delegate(next(), list_atom_v, std::move(q));
    },
    [self, next](list_atom, storage::version_query& q) -> caf::result<scan_result> {
      return self->delegate(next(), list_atom_v, std::move(q));
    },
    [self, next](list_atom, storage::catalog_query& q) -> caf::result<scan_result> {
      return self->delegate(next(), list_atom_v, std::move(q));
    },
  };
}

}  // namespace cl::actors
