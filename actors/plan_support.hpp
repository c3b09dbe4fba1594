#pragma once
/// The core of every route plan: asking a concern actor (`ask`), JSON answers, misses, and the
/// private one-second cache of reads. Body parsing, the write path, list paging and the access
/// and rights helpers each have their own header (plan_body, plan_write, plan_paging,
/// plan_access). Included by plan sources only.

#include "actors/backend_error.hpp"
#include "actors/coordinator.hpp"
#include "domain/exchange.hpp"
#include "domain/principal.hpp"
#include "storage/stores.hpp"

#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <limits>
#include <memory>
#include <optional>
#include <string>

namespace cl::actors {

/// A successful JSON answer.
domain::api_reply json_reply(int status, std::string body);

/// The answer for an id the caller's tenant does not hold: `missing` (404), worded the same
/// whether the id exists in another tenant or nowhere, so no answer confirms another tenant's id.
domain::api_reply not_found(domain::error_id missing, const std::string& what, const std::string& id);

/// 400 INVALID_ARGUMENT for a value the store refused to hold as given (storage::value_unstorable).
domain::api_reply unstorable_reply();

/// The one way a plan asks a concern actor: with the request's timeout (its deadline is watched
/// as a whole), `on_value` getting the answer; an actor that is absent (restarting), fails or is
/// late answers the request 503 BACKEND_UNAVAILABLE naming `concern` instead. In place (no
/// coordinator yet) it throws `coordinator_needed`: the request goes to one.
template <class Handle, class OnValue, class... Args>
void ask(const plan_run& run, const Handle& actor, const char* concern, OnValue on_value, Args&&... args) {
  if (run.in_place()) throw coordinator_needed{};
  if (!actor) return run.answer(backend_unavailable(concern, backend_error::gone));
  run.self()
    ->request(actor, run->timeout, std::forward<Args>(args)...)
    .then(std::move(on_value), [run, concern](caf::error& e) {
      const auto& stats = run->actors->stats;
      // The client learns "unavailable"; the operator learns which kind of failure, and where.
      auto why = classify(e);
      auto kind = backend_error_name(why);
      if (stats) stats->count_backend_error(concern, kind);
      spdlog::warn("{} did not answer a request: {}", concern, kind);
      if (why == backend_error::storage_full)
        return run.answer(domain::api_reply::failure(
          domain::error_id::storage_full, "The service's storage is full: nothing of this request was stored."));
      if (why == backend_error::unstorable) return run.answer(unstorable_reply());
      run.answer(backend_unavailable(concern, why));
    });
}

/// `Cache-Control: private, max-age=1` on `r`: a read the caller may reuse for a second (rights
/// and grants are resolved per second; docs/api.md "Caching").
void private_for_a_second(domain::api_reply& r);

/// The edge cache's keys on `r` (`Surrogate-Key` and `xkey`, the same space-separated list): what
/// the answer depends on, so that a purge by any of them removes it (docs/api.md "Edge cache").
/// `keys`: the tenant, then the records (a Resource, its Work, the contracts of its rights' basis).
/// Adds `Surrogate-Control: max-age=N`, N the seconds until the first of `who`'s token expiry and
/// `valid_until` (the rights' next window edge; at most a day): how long an edge may keep it.
void edge_keys(domain::api_reply& r, const domain::principal& who, const std::vector<std::string>& keys,
               std::int64_t valid_until = std::numeric_limits<std::int64_t>::max());
/// The value of `edge_keys`' `Surrogate-Key` and `xkey`: `keys`, the empty ones left out, space-separated.
std::string edge_key_list(const std::vector<std::string>& keys);
/// The `Surrogate-Control` header of `edge_keys` (nullopt when the answer may not be kept at all).
std::optional<std::pair<std::string, std::string>> surrogate_control(const domain::principal& who,
                                                                     std::int64_t valid_until);

/// Answers the catalogue record `id` (a Work, a Source) of the caller's tenant (200,
/// `Cache-Control: private, max-age=1`), or `missing` (404, also for another tenant's id).
void answer_catalog(const plan_run& run, storage::catalog_kind kind, const std::string& id, domain::error_id missing,
                    const std::string& what);

}  // namespace cl::actors
