#pragma once
/// The change feed actor (the changes route group, issue 29): answers a poll from the change log,
/// for one caller: its tenant's entries, as thin events of the types asked for, each Resource
/// event only if the caller may read that Resource at delivery time (layer 2 now, not when it
/// changed). A poll scans a bounded number of entries and always answers the cursor after the last
/// one it scanned, so a narrow reader moves on through other tenants' and other readers' changes.

#include "actors/events/changes_messages.hpp"
#include "actors/directory.hpp"
#include "domain/rights.hpp"
#include "actors/metrics.hpp"
#include "domain/change_cursor.hpp"
#include "storage/stores.hpp"

#include <caf/stateful_actor.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "storage/held_slots.hpp"

namespace cl::actors {

/// How many event streams and long polls of the feed may be held open at once: per principal (a
/// tenant's subject), per client (`client_id`), and in all (at most half the connection cap, so
/// ordinary requests always find room).
struct held_limits {
  std::size_t per_principal = 10;
  std::size_t per_client = 100;
  std::size_t total = 512;
};

/// The event streams and long polls held now, by principal and by client. Thread-safe: a slot is
/// taken by the feed actor and given back from whichever thread drops its last copy.
class held_requests : public std::enable_shared_from_this<held_requests> {
public:
  /// `count` shows how many are held (set under the lock at every change). `shared`, when not
  /// null, counts every node's held requests (several nodes on PostgreSQL): the per-principal and
  /// per-client limits then hold across nodes, not per node.
  held_requests(held_limits limits, metrics::gauge count, std::shared_ptr<storage::held_slot_store> shared = nullptr)
      : limits_(limits), count_(count), shared_(std::move(shared)) {}
  /// A slot for a request of `holder` through `client`, given back when its last copy is dropped;
  /// null when a limit is reached, with the refusal in `*refusal` (429 TOO_MANY_HELD_REQUESTS per
  /// principal or client, 503 SERVER_OVERLOADED in all). With a shared count this waits on the
  /// database (the feed's actor asks); it throws when the database cannot be reached.
  std::shared_ptr<const void> acquire(const std::string& holder, const std::string& client,
                                      std::optional<domain::api_error>* refusal);

private:
  void release(const std::string& holder, const std::string& client);
  static domain::api_error over_limit(bool principal, std::size_t limit);

  held_limits limits_;
  metrics::gauge count_;
  std::shared_ptr<storage::held_slot_store> shared_;
  std::mutex mutex_;
  std::map<std::string, std::size_t> by_holder_, by_client_;
  std::size_t total_ = 0;
};

struct changes_feed_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<const domain::feed_cursor_codec> cursors;
  std::size_t scan_limit = 1000;  ///< change-log entries a poll reads at most
  std::size_t max_waiting = 10000;  ///< long polls held at once; past it a poll answers at once
  std::int64_t stream_ms = 300000;  ///< an event stream's lifetime
  metrics::counter scanned;        ///< change-log entries polls have read
  metrics::counter delivered;      ///< events polls have answered
  metrics::gauge waiting;          ///< long polls waiting for a change
  /// The held streams and long polls (limits per principal, per client, in all); null: no limit.
  std::shared_ptr<held_requests> holds;
  /// The service's health: while it drains, waiting polls answer at once (a stop is not held up
  /// by a poll that waits for a change).
  std::shared_ptr<const service_health> health;
  /// The platform policy in force (the rights resolver publishes it): an event's `hash` is shown
  /// only where the reader's rights allow a plain read, as on the reads. Null: contracts alone.
  std::shared_ptr<const policy_holder> policy;
};

/// Polls waiting for a change (long polls), answered at the next change that is theirs or when
/// their time is up, whichever comes first.
struct changes_feed_state {
  static constexpr const char* name = "changes-feed";
  struct waiting_poll {
    std::uint64_t id = 0;
    changes_poll poll;  ///< `since`: the cursor it has read up to
    caf::typed_response_promise<changes_page> answer;
    std::shared_ptr<const void> slot;  ///< its held slot (a long poll's; a stream keeps its own)
  };
  std::vector<waiting_poll> waiting;
  std::uint64_t next_id = 0;
  bool wake_pending = false;  ///< a round of re-reads is scheduled (commits coalesce into it)
};

/// What one read of the change log found for a reader: its events (thin, with their sequences),
/// the sequence it read up to, whether that is the end of the log, and whether the log no longer
/// holds what followed `after` (retention).
struct change_scan {
  std::vector<change_event> events;
  std::uint64_t position = 0;
  std::string within;  ///< where the events of the entry after `position` stopped ("" : not started)
  std::uint64_t scanned = 0;
  bool caught_up = false;
  bool expired = false;
};

/// Reads at most `scan_limit` change-log entries after `after` (resuming the entry after it from
/// `within`) and at most `max_events` events of `types` (empty: all) for a reader of `tenant` with
/// `principals` (layer 2 now). A contract's change fans out to `resource.rights_changed` for each
/// Resource of the Works of its new and previous version the reader may read; a page may stop
/// inside it (`within`), and the Resources it examines count against `scan_limit` too. The feed
/// and the webhooks read through this one function; `ids` names the events. A Resource event's
/// `hash` is withheld (null) where the Resource's rights resolved now under `policy` refuse a
/// plain read (layer 3): the hash covers the content, as on the reads (domain/layer3.hpp).
change_scan scan_changes(const storage::record_store& store, const domain::feed_cursor_codec& ids,
                         const std::string& tenant, const std::vector<std::string>& principals,
                         const std::vector<std::string>& types, std::uint64_t after, const std::string& within,
                         std::size_t scan_limit, std::size_t max_events, const domain::platform_policy& policy);

/// Whether a reader may be shown the content-derived members (the `hash`) of Resource `id` of
/// `tenant` now: its rights under `policy` allow a plain read. Each Work's rights are resolved once
/// per `memo` (one scan, one batch of deliveries).
/// Whether a Resource of Work `work` (empty: staged) may show its `hash` now (the reads' rule), one
/// rights resolution per Work in `memo`.
bool work_shown(const storage::record_store& store, const domain::platform_policy& policy, const std::string& tenant,
                const std::string& work, std::map<std::string, bool>& memo);
bool hash_shown(const storage::record_store& store, const domain::platform_policy& policy, const std::string& tenant,
                const std::string& id, std::map<std::string, bool>& memo);

/// `event` (a change event's JSON) with its `hash` null: a message kept for a retry is checked
/// again when it goes (the rights may have changed since it was first sent).
std::string without_hash(const std::string& event);

/// The policy `holder` publishes, or the empty policy (contracts alone) when there is none.
std::shared_ptr<const domain::platform_policy> policy_in_force(const std::shared_ptr<const policy_holder>& holder);

/// The Works contract entry `e` concerns: those of the version it logged and of the one before (a
/// Work the new version dropped has its rights moved too), sorted, each once. The feed fans a
/// contract change out over their Resources; the edge purger purges them.
std::vector<std::string> works_of_contract(const storage::record_store& store, const storage::change_entry& e);

/// An event as the feed answers it and a webhook delivers it (a JSON object).
std::string change_event_json(const change_event& e);

/// What the feed answers for `poll` (pure of actors: the actor calls it; tests may too).
/// `caught_up`: the poll read up to the end of the log (nothing more to scan now).
changes_page read_changes(const changes_feed_config& cfg, const changes_poll& poll, bool* caught_up = nullptr);

/// The event types the feed answers.
const std::vector<std::string>& change_event_types();

changes_actor::behavior_type changes_feed(changes_actor::stateful_pointer<changes_feed_state> self,
                                          std::shared_ptr<const changes_feed_config> cfg);

}  // namespace cl::actors
