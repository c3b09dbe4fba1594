#pragma once
/// The webhook dispatcher (the webhooks route group, issue 29 part 2). It follows the change log for
/// every enabled endpoint from the endpoint's durable cursor, reading through the change feed's
/// `scan_changes` with the endpoint owner's principals (layer 2 at delivery), and delivers each
/// event as a signed Standard Webhooks message. Deliveries run on detached workers kept for the
/// next delivery, one blocking HTTP call at a time each (on a kept connection), at most
/// `concurrency` at once; an endpoint's new messages go `max_in_flight` at a time (1: one after the
/// other, in the log's order).
///
/// At least once: a batch's outcome (its delivery-log entries, retries for what failed, the
/// endpoint's cursor after the batch) is committed in one transaction after the batch; a crash
/// before that commit sends the batch again, with the same `webhook-id`s. A failed message waits in
/// the retry table (by due time) and is retried on the schedule without holding the endpoint's
/// later messages. The endpoint's cursor is a change-log consumer: retention keeps what it has not
/// handled.

#include "actors/directory.hpp"
#include "actors/metrics.hpp"
#include "actors/events/webhook_messages.hpp"
#include "domain/change_cursor.hpp"
#include "domain/fair_share.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cl::storage {
struct webhook_record;
class lease_keeper;
}

namespace cl::actors {

struct webhook_dispatcher_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<actor_directory> directory;  ///< the writer and the access actor
  std::shared_ptr<const domain::feed_cursor_codec> ids;  ///< event ids: the feed's
  std::string secret_key;  ///< 32 bytes: opens the sealed signing secrets
  std::shared_ptr<const webhook_policy> policy;  ///< what the routes' plans ask for
  /// The platform policy in force: a message's `hash` only where the owner's rights allow a plain
  /// read (the feed's rule, `scan_changes`). Null: contracts alone.
  std::shared_ptr<const policy_holder> rights_policy;
  /// One blocking HTTP delivery (app/: the HTTP client with the address policy); run on a worker.
  std::function<webhook_response(const webhook_request&)> send;
  std::vector<std::int64_t> schedule_ms;  ///< the delays after each failed attempt
  std::int64_t disable_after_ms = 5 * 86400 * 1000LL;  ///< failing this long disables an endpoint
  std::int64_t timeout_ms = 10000;   ///< one attempt, connect to answer
  std::size_t scan_limit = 1000;     ///< change-log entries one batch reads at most
  std::size_t batch = 100;           ///< messages one batch sends at most
  std::size_t concurrency = 16;      ///< deliveries in flight at most
  std::uint64_t log_size = 1000;     ///< delivery-log entries kept per endpoint
  metrics::counter attempts;         ///< delivery attempts
  metrics::counter failures;         ///< attempts that failed
  /// Delivers only while this node holds the `webhooks` lease (null: always, one node); taken
  /// again, it reads every endpoint's stored cursor afresh (what another node left in flight is
  /// delivered again, with the same `webhook-id`).
  std::shared_ptr<const storage::lease_keeper> leases{};
  /// How often the enabled endpoints are read again (0: only when a plan here says one changed).
  /// Several nodes: a plan on another node cannot wake this one; its change is seen within this.
  std::chrono::milliseconds reload_every{0};
};

struct webhook_dispatcher_state {
  static constexpr const char* name = "webhook-dispatcher";
  std::set<std::string> busy;      ///< endpoints (tenant\0id) with a batch in flight
  std::set<std::string> retrying;  ///< waiting messages (tenant\0id\0message) in flight
  std::map<std::string, std::uint64_t> read_to;  ///< how far an endpoint has read, ahead of its stored cursor
  std::map<std::string, std::set<std::string>> by_tenant;  ///< the enabled endpoints' ids, by tenant
  /// Endpoints that may have entries of their tenant up to `seen` still to handle; every other
  /// enabled endpoint has handled its tenant's entries up to `seen`.
  std::set<std::string> lagging;
  std::uint64_t seen = 0;  ///< the change-log position up to which the tenants that wrote are known
  std::set<std::string> replay_turn;  ///< endpoints whose next batch is their replay's (they alternate)
  bool loaded = false;     ///< `by_tenant` read since the last change to an endpoint
  std::chrono::steady_clock::time_point refreshed_at{};  ///< when idle endpoints' cursors were last stored
  std::map<std::string, std::chrono::steady_clock::time_point> stored_at;  ///< when its cursor was last written
  /// Delivery slots shared fairly between tenants (domain/fair_share.hpp); an item starts its
  /// delivery once it has a slot. Set when the dispatcher starts.
  std::optional<domain::fair_share<std::function<void()>>> slots;
  std::vector<webhook_worker_actor> idle_workers;  ///< delivery threads waiting for their next delivery
  bool round_pending = false;
  std::int64_t timer_due_ms = 0;  ///< the timed wake already asked for (0: none)
  std::uint64_t term = 0;  ///< the lease's hold the state was read under (0: not held)
  std::chrono::steady_clock::time_point loaded_at{};  ///< when the endpoints were last read

  /// The enabled endpoints, by tenant, read again from `store` (at start, and when a plan says one
  /// changed); an endpoint new to the dispatcher is lagging: it reads from its stored cursor.
  /// What was kept about endpoints no longer enabled goes with them.
  void load_endpoints(const storage::record_store& store);
  /// An endpoint found disabled or deleted (through another node, before this one read the
  /// endpoints again) is no longer known: enabled again, it is new and reads from its stored
  /// cursor, so the changes made while it was disabled still reach it (they did not move it on).
  void forget(const std::string& key);
  /// Another node held the lease meanwhile: every endpoint reads from its stored cursor again.
  void start_over();
};

/// The change-log consumer name of an endpoint (retention keeps what it has not handled).
std::string webhook_consumer(const std::string& tenant, const std::string& id);

/// In `tx`: registers the endpoint's hold on the change log at its cursor while it exists and is
/// enabled, releases it otherwise (disabled, or `exists` false: deleted).
void hold_change_log(storage::write_txn& tx, const storage::webhook_record& w, bool exists = true);

webhook_dispatcher_actor::behavior_type webhook_dispatcher(
  webhook_dispatcher_actor::stateful_pointer<webhook_dispatcher_state> self,
  std::shared_ptr<const webhook_dispatcher_config> cfg);

}  // namespace cl::actors
