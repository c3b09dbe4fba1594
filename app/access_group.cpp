// Route group: access grants on Resources (layer 2 of spec 5.3) and the group directory. Its
// actor answers roles for every group's plans; grant writes go through the core's writer.

#include "app/access_group.hpp"

#include "actors/access.hpp"
#include "actors/plans.hpp"
#include "app/groups.hpp"
#include "storage/backend.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace cl::app {

namespace {

caf::expected<std::vector<actors::child_spec>> spawn_access(const startup& s) {
  auto section = s.settings.groups.get<access_settings>();
  auto cfg = std::make_shared<actors::access_config>();
  cfg->store = s.store;
  cfg->cache = std::make_shared<actors::access_cache>(100000);
  cfg->epoch = std::make_shared<std::atomic<std::uint64_t>>(0);
  cfg->outside_changes = s.directory->snapshot()->outside_changes;
  cfg->directory_file = section.directory_file;
  // A directory that is there but invalid stops the start; a missing one means no groups yet.
  auto start = actors::watched_directory(section.directory_file).check();
  if (auto* error = std::get_if<std::string>(&start)) return startup_failure("access.directory_file " + *error);
  // A grant made or removed on another node: roles cached here are not found again (this node's own
  // grant writes bump the epoch before they answer).
  s.store->watch_others([epoch = cfg->epoch](const std::vector<storage::change_entry>& changes) {
    for (const auto& c : changes)
      if (c.op == storage::change_op::granted || c.op == storage::change_op::revoked) return void(++*epoch);
  });
  s.directory->update([&](actors::concern_handles& h) {
    h.access_cache = cfg->cache;
    h.access_epoch = cfg->epoch;
  });
  std::shared_ptr<const actors::access_config> fixed = cfg;
  return std::vector<actors::child_spec>{actors::supervised<actors::access_actor>(
    "access", [fixed, blocking = s.backend->traits().reads_block](caf::actor_system& sys) {
      return spawn_reading(sys, blocking, actors::access, fixed);
    })};
}

}  // namespace

void register_access(registry& r) {
  r.add_routes({
    {"GET", "/v0/content-lake/resources/{id}/access", "content-lake.read", &actors::plan_list_grants, nullptr},
    {"GET", "/v0/content-lake/resources/{id}/access/{principal}", "content-lake.read", &actors::plan_get_grant, nullptr},
    http::write_only({"PUT", "/v0/content-lake/resources/{id}/access/{principal}", "content-lake.write", &actors::plan_put_grant, nullptr}),
    {"DELETE", "/v0/content-lake/resources/{id}/access/{principal}", "content-lake.write", &actors::plan_delete_grant,
     nullptr},
  });
  r.add_options({
    {"access.directory_file", "config/directory.json",
     "Group directory (docs/api.md, Access grants): which u_/a_ principals belong to which g_ group, per tenant. "
     "Re-read when it changes; it must be there at start (a relative default is read from the working directory); "
     "\"\": no groups.",
     config::text_member(&access_settings::directory_file)},
  });
  r.add_actors("access", &spawn_access);
}

}  // namespace cl::app
