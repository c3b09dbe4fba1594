#pragma once
/// The webhook store (the webhooks route group, issue 29 part 2): endpoints with their delivery
/// cursor in the change log, the messages waiting for a retry (by due time), and each endpoint's
/// delivery log (its latest `webhooks.delivery_log_size` attempts). Registered from its own file.
///
/// SQL mapping: `webhooks(tenant, id, owner, client_id, url, event_types, description, enabled,
/// disabled_reason, secret_sealed, previous_secret_sealed, previous_until_ms, created, updated,
/// cursor, failing_since_ms, log_next, replay_next, replay_last)` keyed (tenant, id) with an index on
/// (tenant, owner, id); `webhook_retries(due_ms, tenant, webhook_id, message_id, ...)` keyed by all
/// four; `webhook_deliveries(tenant, webhook_id, number, ...)` keyed by the three, newest first.

#include "storage/record_store.hpp"
#include "storage/copyable.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::storage {

/// An endpoint.
struct webhook_record {
  std::string tenant;
  std::string id;           ///< whk_
  std::string owner;        ///< the `sub` that created it: deliveries carry what it may read
  std::string client_id;
  std::string url;
  std::vector<std::string> event_types;  ///< empty: every type
  std::string description;
  bool enabled = true;
  /// Messages sent at once (1: one after the other, in the log's order; more: they may arrive out of order).
  std::int32_t max_in_flight = 1;
  std::string disabled_reason;  ///< why the service disabled it (410, failing too long); empty otherwise
  std::string secret_sealed;    ///< the signing secret, sealed under the data dir's webhook key
  std::string previous_secret_sealed;  ///< the secret before the last rotation, while it still signs
  std::int64_t previous_until_ms = 0;
  std::string created, updated;  ///< RFC 3339
  std::uint64_t cursor = 0;      ///< the last change-log sequence handled (delivered or scheduled)
  std::string cursor_within;     ///< where the entry after `cursor` stopped (a contract change's fan-out)
  std::int64_t failing_since_ms = 0;  ///< the first failure since the last success; 0 when none
  std::uint64_t log_next = 1;    ///< the number the next delivery-log entry gets
  std::uint64_t replay_next = 0, replay_last = 0;  ///< a replay in progress: sequences still to send
  std::string replay_within;     ///< where the entry `replay_next` stopped
  bool operator==(const webhook_record&) const;
};

/// A message waiting for its next attempt.
struct webhook_retry {
  std::string tenant;
  std::string webhook_id;
  std::string message_id;   ///< `webhook-id`: the event id, the same on every attempt
  std::string event_type;
  std::string resource_id;  ///< a Resource event's subject (layer 2 is checked again at each attempt)
  std::string body;
  std::uint64_t seq = 0;    ///< the change-log entry it tells of (0: a test message)
  std::int32_t attempts = 0;  ///< attempts made so far
  std::int64_t due_ms = 0;
};

/// One attempt, as the delivery log shows it (no bodies, no secrets).
struct webhook_delivery {
  std::string tenant;
  std::string webhook_id;
  std::uint64_t number = 0;  ///< per endpoint, increasing
  std::string message_id;
  std::string event_type;
  std::uint64_t seq = 0;
  std::int32_t attempt = 0;
  std::int64_t at_ms = 0;
  std::int32_t status = 0;   ///< the HTTP status answered; 0 when none
  std::int64_t latency_ms = 0;
  std::string outcome;       ///< delivered, failed, abandoned
  std::string error;         ///< the error class of a failure (timeout, refused_address, http_status, ...)
  std::int64_t next_attempt_ms = 0;  ///< when it is tried again; 0 when not
};

class webhook_writes;

class webhook_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = webhook_writes;
  virtual std::optional<webhook_record> get(std::string_view tenant, std::string_view id) const = 0;
  /// The endpoints `owner` created in `tenant`, in id order after `after`, at most `limit`.
  virtual std::vector<webhook_record> owned(std::string_view tenant, std::string_view owner, std::string_view after,
                                            std::size_t limit) const = 0;
  /// Every enabled endpoint of every tenant, in (tenant, id) order after `after` (a key from
  /// `resume_key`), at most `limit`: the dispatcher's walk.
  virtual std::vector<webhook_record> enabled(std::string_view after, std::size_t limit) const = 0;
  /// Messages due at or before `now_ms`, soonest first, at most `limit`; with `after` (one this
  /// returned), those that follow it (a caller pages past messages it cannot start yet).
  virtual std::vector<webhook_retry> due(std::int64_t now_ms, std::size_t limit,
                                         const webhook_retry* after = nullptr) const = 0;
  /// The soonest due time of a waiting message, if any.
  virtual std::optional<std::int64_t> next_due() const = 0;
  /// An endpoint's delivery log, newest first, numbers below `before` (0: from the newest), at most `limit`.
  virtual std::vector<webhook_delivery> deliveries(std::string_view tenant, std::string_view id, std::uint64_t before,
                                                   std::size_t limit) const = 0;
  /// The key `enabled` resumes after for `w`.
  static std::string resume_key(const webhook_record& w);
};

class webhook_writes : public webhook_reads {
public:
  virtual void put(const webhook_record& w) = 0;
  /// Removes the endpoint and its delivery log (its waiting messages are dropped when they come due).
  virtual void erase(std::string_view tenant, std::string_view id) = 0;
  virtual void schedule(const webhook_retry& r) = 0;
  virtual void unschedule(const webhook_retry& r) = 0;
  /// Appends `d` (its `number` taken from the endpoint's `log_next`, which the caller advances and
  /// puts) and drops the entry `keep` numbers older.
  virtual void log_delivery(const webhook_delivery& d, std::uint64_t keep) = 0;
};

inline const webhook_reads& webhooks(const read_view& view) { return view.store<webhook_reads>(); }
inline webhook_writes& webhooks(write_txn& tx) { return tx.store<webhook_writes>(); }

}  // namespace cl::storage
