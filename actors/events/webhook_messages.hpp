#pragma once
/// The webhooks route group's actor interfaces and messages (issue 29, part 2): the dispatcher
/// that follows the change log for every enabled endpoint, and the detached workers that make one
/// HTTP delivery each.

#include "actors/type_ids.hpp"
#include "domain/webhook.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>
#include <string>

// In CAF 0.17.6 CAF_ADD_ATOM defines an atom_constant and its _v value.
CAF_ADD_ATOM(contentlake, cl::actors, webhook_wake_atom, "whwake")
CAF_ADD_ATOM(contentlake, cl::actors, webhook_send_atom, "whsend")
CAF_ADD_ATOM(contentlake, cl::actors, webhook_policy_atom, "whpolicy")
CAF_ADD_ATOM(contentlake, cl::actors, webhook_read_atom, "whread")

namespace cl::storage {
class record_store;
}

namespace cl::actors {

/// One HTTP delivery and what it came to (plain data in domain/webhook.hpp: the HTTP client uses them too).
using webhook_request = domain::webhook_request;
using webhook_response = domain::webhook_response;

/// What the group's routes need of its configuration: the key that seals signing secrets, the URL
/// policy, the rotation overlap and the bounds.
struct webhook_policy {
  std::string secret_key;
  bool https_only = true;
  std::vector<domain::ip_network> allowed_networks;
  std::int64_t rotation_overlap_ms = 24 * 3600 * 1000LL;
  std::size_t max_per_owner = 50;
};

/// A read of the group's records for a plan, run by the dispatcher (the actor that owns the
/// group's store; reads are short LMDB lookups). It leaves what it found where the plan holds it.
struct webhook_read_job {
  std::function<void(const storage::record_store&, const webhook_policy&)> run;
};

/// The dispatcher: wakes on commits (their last sequence), on a plan's change to an endpoint, a
/// test message or a replay (0), and on its own timers (0).
/// It also answers the group's policy and runs the reads of the routes' plans.
using webhook_dispatcher_actor =
  caf::typed_actor<caf::reacts_to<webhook_wake_atom, std::uint64_t>,
                   caf::replies_to<webhook_policy_atom>::with<std::shared_ptr<const webhook_policy>>,
                   caf::replies_to<webhook_read_atom, webhook_read_job>::with<bool>>;

/// Messages for one endpoint, shared by the workers that send them (as many as the endpoint's
/// `max_in_flight`): each worker takes the next message no one took, signs it as it sends it and
/// leaves the outcome at the message's place. The dispatcher reads an outcome only once its
/// message is `done` (a worker past its timeout may still be sending).
struct webhook_job {
  struct item {
    std::string id, body;                    ///< `webhook-id` and the JSON sent
    std::int64_t at_ms = 0;                  ///< when the attempt started
    webhook_response response;
    std::atomic<bool> done{false};           ///< `response` is final (release: written before)
  };
  explicit webhook_job(std::size_t n) : items(n) {}
  std::string url;
  std::vector<std::string> keys;  ///< the signing keys in force (each signs: two during a rotation)
  std::int64_t timeout_ms = 10000;
  std::vector<item> items;
  std::atomic<std::size_t> next{0};        ///< the next message to take
  std::atomic<bool> cancelled{false};      ///< the dispatcher stopped waiting: take no more
};
using webhook_job_ptr = std::shared_ptr<webhook_job>;

/// A detached worker, kept by the dispatcher for the next job: sends messages of `job` one after
/// the other until none is left, then answers.
using webhook_worker_actor = caf::typed_actor<caf::replies_to<webhook_send_atom, webhook_job_ptr>::with<bool>>;

}  // namespace cl::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::webhook_job_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const cl::actors::webhook_policy>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cl::actors::webhook_read_job)
