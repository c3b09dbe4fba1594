#pragma once
/// Internal to the webhook dispatcher (actors/events/webhook_*.cpp): what a delivery is, the
/// worker that sends a job's messages, and the transactions that commit what deliveries came to.
/// The scheduling itself (fair slots, the retry schedule) is pure, in domain/fair_share.hpp and
/// `domain::judge_attempt`.

#include "actors/events/changes_feed.hpp"
#include "actors/events/webhook_dispatcher.hpp"
#include "actors/metrics.hpp"
#include "storage/webhook_store.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cl::actors::webhook_delivery {

/// One message to send: what the delivery log and a retry need besides the body.
struct message {
  std::string id, type, resource_id, body;
  std::uint64_t seq = 0;
  std::int32_t attempt = 1;
};

/// A message's attempt and what it came to.
struct attempt_result {
  message msg;
  std::int64_t at_ms = 0;
  webhook_response response;
};

/// The messages of a scan of the change log, in its order.
std::vector<message> messages_of(const change_scan& scan);

/// A job sending `msgs` to `w`, signed with its secrets in force (none readable: no keys).
webhook_job_ptr make_job(const webhook_dispatcher_config& cfg, const storage::webhook_record& w,
                         const std::vector<message>& msgs, std::int64_t now_ms);

/// Each message's attempt once every worker of `job` answered, in order; a message whose attempt
/// did not end in time counts as a timeout (and, with every failure, in `failures`).
std::vector<attempt_result> results_of(webhook_job& job, std::vector<message> msgs, const metrics::counter& failures);

/// The delivery-log entry of `r` for endpoint `w`, and what happens next: a retry (returned with
/// `*retry` set) or nothing more. Updates the endpoint's failing state (`domain::judge_attempt`).
storage::webhook_delivery account(const webhook_dispatcher_config& cfg, storage::webhook_record& w,
                                  const attempt_result& r, std::optional<storage::webhook_retry>* retry);

/// A batch's outcome in one transaction: its log entries and retries, and the endpoint's cursor
/// (or its replay's) after `scan`; an `expired` scan moves the cursor to `last` and logs the skip.
storage::mutation batch_outcome(std::shared_ptr<const webhook_dispatcher_config> cfg, const storage::webhook_record& w,
                                change_scan scan, bool replay, std::uint64_t last, std::vector<attempt_result> results);

/// A waiting message's outcome: unscheduled, and its attempt (none: dropped) logged.
storage::mutation retry_outcome(std::shared_ptr<const webhook_dispatcher_config> cfg, storage::webhook_retry r,
                                std::optional<attempt_result> result);

/// The endpoints' cursors that moved on without being read, stored at `seen`.
storage::mutation idle_cursors(std::vector<std::pair<std::string, std::string>> idle, std::uint64_t seen);

/// A detached worker kept for the next job: sends `job`'s messages one after the other (each
/// signed as it goes, so `webhook-timestamp` is the attempt's) until none is left, then answers.
webhook_worker_actor::behavior_type worker(webhook_worker_actor::pointer self,
                                           std::function<webhook_response(const webhook_request&)> send,
                                           metrics::counter attempts);

}  // namespace cl::actors::webhook_delivery
