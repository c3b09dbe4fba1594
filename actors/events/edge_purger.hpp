#pragma once
/// The edge purger (issue 29, part 3): follows the change log with its own cursor (a registered
/// consumer, so retention keeps what it has not purged) and purges, at every configured edge cache
/// (`edge.purge_urls`), the answers each change makes stale, by the keys reads carry (`xkey`,
/// docs/api.md "Edge cache"). Detached: a purge is a blocking HTTP request to the edge.
///
/// Per edge it keeps a position in the log; an edge that fails is retried with backoff without
/// holding the others back; one failing for longer than `give_up_after` stops holding the log
/// and gets a purge of everything once it answers again. Changes the log does not record (the
/// platform policy, the group directory: `concern_handles::outside_changes`) and the purger's
/// own start purge everything. Every purge is sent again `repeat_after` later, so an answer a
/// read fetched before the change and stored after the first purge does not survive.

#include "actors/directory.hpp"
#include "actors/metrics.hpp"
#include "actors/type_ids.hpp"
#include "domain/edge_purge.hpp"
#include "storage/stores.hpp"

#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

CAF_ADD_ATOM(contentlake, cl::actors, edge_purge_atom, "edgepurge")

namespace cl::storage {
class lease_keeper;
}

namespace cl::actors {

/// The keys a run of changes purges: `hard` (the cached answers are removed: rights, grants,
/// promotions) and `soft` (they must be revalidated with the service before they are served
/// again: edits), each sorted and without repeats; a key in both is only hard.
struct edge_purge_keys {
  std::vector<std::string> hard, soft;
  bool empty() const { return hard.empty() && soft.empty(); }
};

/// What the mapping needs to know besides the entry: the Work a Resource belongs to (empty:
/// staged or gone) and the Works a contract entry concerns (its version's and the previous one's).
struct edge_lookups {
  std::function<std::string(const std::string& tenant, const std::string& resource)> work_of;
  std::function<std::vector<std::string>(const storage::change_entry&)> works_of_contract;
};

/// The keys `entries` purge: a Resource edit (replaced, patched, a version kept) -> the Resource
/// (soft when `soft_edits`, else hard); a promotion -> the Resource and its Work (hard); a grant
/// given or revoked -> the Resource (hard); a Work edit -> the Work (soft / hard as edits); a
/// contract version -> the contract and every Work of that version and the previous one (hard).
/// Creations purge nothing (nothing was cached under a new id: refusals never are), nor do blob
/// entries (blob answers are never cached).
edge_purge_keys purge_keys_for(const std::vector<storage::change_entry>& entries, const edge_lookups& lookups,
                               bool soft_edits);

/// `keys` joined by spaces into header values of at most `max_bytes` each (a key longer than
/// that gets a value of its own).
std::vector<std::string> key_chunks(const std::vector<std::string>& keys, std::size_t max_bytes);

/// `edge_purge_atom, 0`: the purger's timer (it looks at the log every `interval`);
/// `edge_purge_atom, seq`: a commit logged changes up to `seq` (a wake, from the writer's thread).
using edge_purger_actor = caf::typed_actor<caf::reacts_to<edge_purge_atom, std::uint64_t>>;

/// The change-log consumer name the purger registers under.
inline constexpr const char* edge_purge_consumer = "edge-purge";

struct edge_purger_config {
  std::shared_ptr<storage::record_store> store;
  std::shared_ptr<actor_directory> directory;  ///< the writer (consumer position), outside changes
  std::vector<domain::purge_target> edges;       ///< none: the purger only forgets its consumer
  std::vector<std::string> edge_names;         ///< host:port of each, for logs (no secret, no path)
  std::string secret;
  bool soft_edits = true;
  std::size_t batch = 1000;                      ///< change-log entries read per round at most
  std::size_t header_bytes = 4000;               ///< keys per purge request, in header bytes
  std::chrono::milliseconds interval{25};        ///< how often the log is looked at when idle
  std::chrono::milliseconds acknowledge_every{60000};
  std::chrono::milliseconds repeat_after{1000};
  std::chrono::milliseconds give_up_after{3600 * 1000};
  /// Waits after consecutive failed rounds of an edge (the last repeats): short, since while an
  /// edge cannot be purged it may serve what changed, and a refused connection costs nothing.
  std::vector<std::chrono::milliseconds> backoff{std::chrono::milliseconds{100}, std::chrono::milliseconds{250},
                                                 std::chrono::milliseconds{500}, std::chrono::milliseconds{1000}};
  std::chrono::milliseconds log_every{60000};  ///< a failing edge is logged when it starts failing, then this often
  std::int64_t timeout_ms = 5000;
  /// Sends one purge (app/ hands in http::send_purge; tests put a recorder here).
  std::function<domain::purge_response(const domain::purge_request&)> send;
  metrics::gauge lag_seconds;  ///< how old the oldest change not purged at every edge is
  metrics::gauge failing_edges;  ///< edges whose last purge failed (0: every edge answered it)
  metrics::counter purges, failures;
  /// Purges only while this node holds the `edge-purge` lease (null: always, one node); taken
  /// again, it starts afresh from the consumer position, as at start.
  std::shared_ptr<const storage::lease_keeper> leases{};
};

struct edge_purger_state {
  static constexpr const char* name = "edge-purger";
  using clock = std::chrono::steady_clock;
  /// A purge to send (again) at `due`.
  struct repeat {
    clock::time_point due;
    edge_purge_keys keys;
    bool everything = false;
  };
  struct edge {
    std::uint64_t position = 0;   ///< the last change-log entry purged here
    bool everything = true;       ///< a purge of everything is owed (at start, after an outside change)
    std::size_t failures = 0;     ///< consecutive failed rounds
    clock::time_point logged_at{};  ///< when its failing was last logged
    clock::time_point retry_at{};
    clock::time_point failing_since{};
    std::deque<repeat> repeats;
  };
  std::vector<edge> edges;
  std::uint64_t acknowledged = 0;
  clock::time_point acknowledged_at{};
  std::uint64_t outside_seen = 0;
  bool started = false;
  std::uint64_t term = 0;  ///< the lease's hold this state was read under (0: not held)
};

edge_purger_actor::behavior_type edge_purger(edge_purger_actor::stateful_pointer<edge_purger_state> self,
                                             std::shared_ptr<const edge_purger_config> cfg);

}  // namespace cl::actors
