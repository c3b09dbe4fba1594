#include "actors/changes_feed.hpp"

#include "actors/backend_error.hpp"

#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace cl::actors {

namespace {

using storage::change_kind;
using storage::change_op;

/// The cursor layout, part of every cursor's binding: another layout's cursors do not open.
constexpr const char* cursor_layout = "1";

/// The event an entry is for `principal_set`, if any: its type, or nothing (a change the feed does
/// not name, such as another principal's grant).
std::optional<std::string> type_of(const storage::change_entry& e, const std::vector<std::string>& principals) {
  auto mine = [&] { return std::find(principals.begin(), principals.end(), e.principal) != principals.end(); };
  if (e.kind == change_kind::work) {
    if (e.op == change_op::created) return "work.created";
    if (e.op == change_op::replaced || e.op == change_op::patched) return "work.updated";
    return std::nullopt;
  }
  if (e.kind != change_kind::resource) return std::nullopt;  // contracts and blobs: not (yet) feed events
  switch (e.op) {
    case change_op::created: return "resource.created";
    case change_op::replaced:
    case change_op::patched: return "resource.updated";
    case change_op::snapshotted: return "resource.version_created";
    case change_op::promoted: return "resource.promoted";
    case change_op::granted: return mine() ? std::optional<std::string>{"resource.appeared"} : std::nullopt;
    case change_op::revoked: return mine() ? std::optional<std::string>{"resource.disappeared"} : std::nullopt;
    default: return std::nullopt;
  }
}

changes_page refused(domain::error_id id, std::string message, std::string detail) {
  changes_page p;
  p.error = domain::api_error{id, std::move(message), {{"since", std::move(detail)}}};
  return p;
}

}  // namespace

const std::vector<std::string>& change_event_types() {
  static const std::vector<std::string> types = {
    "resource.created", "resource.updated",  "resource.version_created", "resource.promoted",
    "resource.appeared", "resource.disappeared", "work.created",          "work.updated",
  };
  return types;
}

std::string changes_binding(std::vector<std::string> types) {
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  std::string out = cursor_layout;
  out.push_back(';');
  for (const auto& t : types) out += t + ",";
  return out;
}

changes_page read_changes(const changes_feed_config& cfg, const changes_poll& poll) {
  auto binding = changes_binding(poll.types);
  auto last = cfg.store->last_change();
  std::uint64_t after = last;  // no `since`: from now
  if (!poll.since.empty()) {
    domain::cursor_problem why{};
    auto opened = cfg.cursors->open(poll.since, poll.tenant, binding, &why);
    if (!opened && why == domain::cursor_problem::mismatch)
      return refused(domain::error_id::cursor_mismatch, "The cursor was issued for another tenant or other types.",
                     "issued for another tenant or other types");
    if (!opened)
      return refused(domain::error_id::cursor_invalid, "The cursor is not one this service issued.",
                     "not a cursor of this service");
    after = *opened;
  }
  changes_page page;
  auto entries = after < last ? cfg.store->read_from(after, cfg.scan_limit) : std::vector<storage::change_entry>{};
  // Sequences are dense: a first entry past `after + 1`, or none while the log is ahead, means
  // retention trimmed what followed the cursor.
  if (after > last || (after < last && (entries.empty() || entries.front().seq != after + 1)))
    return refused(domain::error_id::cursor_expired, "The change feed no longer holds what followed this cursor.",
                   "older than the change log's retention");
  auto wanted = [&](const std::string& type) {
    return poll.types.empty() || std::find(poll.types.begin(), poll.types.end(), type) != poll.types.end();
  };
  auto position = after;
  for (const auto& e : entries) {
    if (page.events.size() >= poll.page_size) break;
    position = e.seq;
    if (e.tenant != poll.tenant) continue;
    auto type = type_of(e, poll.principals);
    if (!type || !wanted(*type)) continue;
    bool resource = e.kind == change_kind::resource;
    bool readable = resource && storage::holds_any_grant(cfg.store->grants(), poll.tenant, poll.principals, e.id);
    // Layer 2 at delivery: a Resource event only while the caller reads it; `disappeared` only
    // once it no longer does (a grant through a group may still hold).
    if (resource && (*type == "resource.disappeared" ? readable : !readable)) continue;
    change_event ev;
    ev.id = cfg.cursors->event_id(poll.tenant, e.seq);
    ev.type = std::move(*type);
    ev.subject = resource ? "resource_id" : "work_id";
    ev.subject_id = e.id;
    ev.version = e.version;
    ev.hash = e.hash;
    ev.at_ms = e.at_ms;
    if (e.transaction != 0) ev.transaction = "txn_" + cfg.cursors->event_id(poll.tenant, e.transaction).substr(4);
    page.events.push_back(std::move(ev));
  }
  page.next_cursor = cfg.cursors->seal({poll.tenant, binding, position});
  cfg.scanned.increment(static_cast<double>(position - after));
  cfg.delivered.increment(static_cast<double>(page.events.size()));
  return page;
}

changes_actor::behavior_type changes_feed(changes_actor::stateful_pointer<changes_feed_state>,
                                          std::shared_ptr<const changes_feed_config> cfg) {
  return {
    [cfg](changes_atom, const changes_poll& poll) -> caf::result<changes_page> {
      try {
        return read_changes(*cfg, poll);
      } catch (const std::exception& e) {
        spdlog::error("changes: the change log could not be read: {}", e.what());
        return caf::make_error(backend_error::storage_failure, "change log read failed");
      }
    },
  };
}

}  // namespace cl::actors
