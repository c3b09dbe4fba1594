#pragma once
/// Reads a replica may serve (`storage.postgresql.replica_url`; storage-private). A statement runs
/// on a replica only when that replica has replayed the change log at least as far as the read
/// must reflect: the node's known position (its own last commit, its last read of the log, and a
/// request's `Content-Lake-Position`, which the request reached before it reads), on the same
/// history. Every commit stamps the log's head with the primary's timeline, and the node learns
/// the timeline with every head it learns (`read_floor`): a replica whose head carries another
/// (one that replayed an old primary's commits its successor never got, before it is rewound)
/// is not read, however far its head. The replica's head is read in the same round trip as the
/// statement when the connection has not been seen that far yet. A replica behind, on another
/// history, gone, silent or cancelling the read (a conflict with its replay) leaves the read to
/// the primary: no client sees anything older than it wrote or was told.

#include "storage/postgresql/connection.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cl::storage::pg {

/// How far a read must reflect the log: a position, on the history of a timeline.
struct read_floor {
  std::uint64_t position = 0;
  std::uint64_t timeline = 0;
};

/// Reads by where they ran, and how far behind the last replica found behind was.
struct replica_counts {
  std::uint64_t on_replica = 0;
  std::uint64_t on_primary = 0;
  std::uint64_t behind = 0;  ///< change-log entries the last replica asked lacked (0: it was current)
  std::uint64_t elsewhere = 0;  ///< reads a replica did not serve as its head is on another timeline
};

/// The primary's committed reads of the same stores, held to the same floor: a server whose head
/// is behind the floor, or on an earlier timeline than the node learned, is no longer the primary
/// (an old primary thawed from a freeze, which a pooled connection still reaches through a libpq
/// multi-host URL until Patroni demotes it). Its connections are given up and the read fails as
/// `unavailable` (503 with Retry-After): never an answer older than the floor. The head travels in
/// the read's round trip only when the connection was not yet seen at the floor.
class held_reads final : public session {
public:
  held_reads(pool& primary, std::function<std::optional<read_floor>()> required);
  using session::run;
  rows run(const statement& s, std::initializer_list<std::string_view> params) const override;
  /// Reads refused as their server was found behind the floor (a metric).
  std::uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

private:
  rows run_on(const connection& c, const read_floor& floor, const statement& s,
              std::initializer_list<std::string_view> params) const;
  pool& pool_;
  pooled_session plain_;
  std::function<std::optional<read_floor>()> required_;
  mutable std::atomic<std::uint64_t> refused_{0};
};

class replica_session final : public session {
public:
  /// `required` answers what a read must reflect, when the read begins; none: the read goes to
  /// the primary.
  replica_session(const std::string& url, const std::string& password, std::size_t size,
                  std::chrono::milliseconds answer_wait, const session& primary,
                  std::function<std::optional<read_floor>()> required);
  using session::run;
  rows run(const statement& s, std::initializer_list<std::string_view> params) const override;
  replica_counts counts() const;
  /// A gone or silent replica is not asked again for this long.
  static constexpr std::chrono::milliseconds rest{1000};

private:
  mutable pool replicas_;
  const session& primary_;
  std::function<std::optional<read_floor>()> required_;
  mutable std::atomic<std::uint64_t> on_replica_{0}, on_primary_{0}, behind_{0}, elsewhere_{0};
  mutable std::atomic<std::int64_t> resting_until_ms_{0};
};

}  // namespace cl::storage::pg
