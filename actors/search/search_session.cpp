#include "actors/search/search_session.hpp"
#include "actors/backend_error.hpp"
#include "actors/fault_hooks.hpp"

#include "domain/clock.hpp"
#include "domain/ids.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <limits>
#include <set>
#include <unordered_set>

namespace cl::actors {

namespace {

domain::api_error session_missing(domain::session_miss miss) {
  if (miss == domain::session_miss::expired)
    return {domain::error_id::search_session_expired, "The search session expired; start a new search.", {}};
  return {domain::error_id::search_session_not_found, "No such search session; start a new search.", {}};
}

domain::api_error sessions_unavailable() {
  return {domain::error_id::backend_unavailable, "The search sessions are unavailable; retry shortly.", {}};
}

/// `work`'s answer, or none when the session store failed (a shared store whose database is away).
template <class Work>
auto guarded_sessions(Work work) -> std::optional<decltype(work())> {
  try {
    return work();
  } catch (const std::exception& e) {
    spdlog::error("search: the search sessions could not be read or written: {}", e.what());
    return std::nullopt;
  }
}

/// The index query of `request` for a caller whose grants count through `principals`.
storage::search_query index_query(const domain::session_owner& owner, const domain::search_request& request,
                                  const search_call& call) {
  storage::search_query q;
  q.tenant = owner.tenant;
  q.text = request.query;
  q.types = request.types;
  q.languages = request.languages;
  q.work_id = request.work_id;
  q.principals = call.principals;
  return q;
}



/// One list's next `wanted` candidates for `call`, ranked by `q` past what the session `returned`
/// and what the call excludes, spending rankings from `left`. The index may lag the grants (a
/// revoked grant, a burst of writes ahead of it): unless the revision ranked holds every change
/// this node knew of before it (`known`: its own commits and what it read of the log, what a read
/// here answers from too), every candidate's grant is read again from the record store, and one
/// that no longer holds is ranked past (the list ranks again while the budget lasts), so a page
/// is the truth of now, not of the index.
search_stream rank_list(const search_session_config& cfg, const search_call& call, storage::search_query& q,
                        const std::vector<std::string>& returned, const search_stream_call& asked, std::size_t wanted,
                        std::uint64_t known, int& left) {
  search_stream out;
  if (asked.candidates == 0) return out;
  std::unordered_set<std::string> skip(returned.begin(), returned.end());
  skip.insert(asked.exclude.begin(), asked.exclude.end());
  q.skip = &skip;
  out.exhausted = false;  // until the index says so
  while (left > 0) {
    q.page_size = wanted - out.hits.size();
    q.max_runs = left;
    auto page = cfg.index->search(q);
    left -= std::max(1, page.runs);
    out.exhausted = page.exhausted;
    std::vector<std::string> ids;
    ids.reserve(page.hits.size());
    for (const auto& h : page.hits) {
      skip.insert(h.id);  // taken or refused: a further round ranks past it
      ids.push_back(h.id);
    }
    // Else the page's grants in one read (one round trip on PostgreSQL).
    bool current = page.applied >= known;
    auto readable = current ? std::set<std::string>{}
                            : cfg.store->grants().readable_among(call.owner.tenant, call.principals, ids);
    for (auto& h : page.hits)
      if (current || readable.count(h.id)) out.hits.push_back(std::move(h));
    if (out.hits.size() >= wanted || page.exhausted) break;
  }
  return out;
}

/// One page of `call`: its candidates, or why none (`behind`: the index must apply a position first).
search_outcome page_of(const search_session_config& cfg, search_call& call) {
  auto& sessions = *cfg.sessions;
  auto now = domain::now_ms();
  search_outcome out;
  if (cfg.index->is_rebuilding()) {
    // Pages of a half-built index would miss Resources it has not reached: none until it is done.
    out.error = domain::api_error{domain::error_id::search_index_rebuilding,
                                  "The search index is being rebuilt from the stored Resources; retry shortly.", {}};
    return out;
  }
  // What the session answered so far, a copy (bounded by max_returned); the queries then run in
  // parallel with other sessions' queries.
  std::vector<std::string> returned;
  bool continued = !call.search_id.empty() && !call.unopened;
  if (continued) {
    auto found = guarded_sessions([&] { return sessions.find(call.search_id, call.owner, now); });
    if (!found) {
      out.error = sessions_unavailable();
      return out;
    }
    if (!found->session) {
      out.error = session_missing(found->miss);
      return out;
    }
    out.search_id = call.search_id;
    // A page of a session another node opened is ranked on an index at least as far as that one.
    auto needed = std::max(call.at_least, found->session->position);
    if (cfg.index->applied() < needed) {
      out.behind = needed;
      return out;
    }
    out.request = std::move(found->session->request);
    out.answered_before = found->session->returned.size();
    returned.assign(found->session->returned.begin(), found->session->returned.end());
  } else {
    if (cfg.index->applied() < call.at_least) {
      out.behind = call.at_least;
      return out;
    }
    out.request = call.request;
  }
  if (out.answered_before >= cfg.limits.max_returned) {  // a session answers a bounded number of hits
    out.session_full = true;
    return out;
  }
  auto room = cfg.limits.max_returned - out.answered_before;
  int left = call.budget;
  // Before the index is asked. A node lagging the log past its bound may not know of a grant
  // revoked elsewhere: then no revision counts as holding everything, and every grant is read again.
  auto known = cfg.store->caches_current() ? cfg.store->known_change() : std::numeric_limits<std::uint64_t>::max();
  auto rank = [&](const search_stream_call& asked, bool metadata_only) {
    auto q = index_query(call.owner, out.request, call);
    q.metadata_only = metadata_only;
    return rank_list(cfg, call, q, returned, asked, std::min(asked.candidates, room), known, left);
  };
  try {
    out.full = rank(call.full, false);
    out.metadata = rank(call.metadata, true);
    out.spent = call.budget - left;
  } catch (const storage::query_syntax_error& e) {
    out.error = domain::api_error{domain::error_id::query_syntax, "The query cannot be parsed: " + e.message,
                                  {{"/query", e.message}}};
    return out;
  } catch (const std::exception& e) {
    // An index that cannot be read answers like an actor that is not there (503); the
    // sessions stay.
    spdlog::error("search: the index could not be read: {}", e.what());
    out.error = domain::api_error{domain::error_id::backend_unavailable, "The search index is unavailable.", {}};
    return out;
  }
  // A new search's session is opened by the record of its first page's hits (one write), under an
  // id given now.
  if (!continued) {
    out.search_id = call.unopened ? call.search_id : domain::random_id("srch_");
    out.position = cfg.index->applied();
  }
  return out;
}

/// Answers the waiting pages whose position the index has applied (or whose wait is over); looks
/// again after a step while any waits.
void answer_waiting(search_session_actor::stateful_pointer<search_session_state> self, const search_session_config& cfg) {
  auto now = std::chrono::steady_clock::now();
  auto& waiting = self->state.waiting;
  for (auto it = waiting.begin(); it != waiting.end();) {
    if (cfg.index->applied() >= it->position) {
      auto out = page_of(cfg, it->call);
      if (out.behind == 0) {
        it->promise.deliver(std::move(out));
        it = waiting.erase(it);
        continue;
      }
      it->position = out.behind;
    }
    if (now >= it->deadline) {
      search_outcome late;
      late.error = domain::api_error{domain::error_id::search_index_behind,
                                     "This node's search index has not reached the position asked for yet.", {}};
      it->promise.deliver(std::move(late));
      it = waiting.erase(it);
      continue;
    }
    ++it;
  }
  if (!waiting.empty()) self->delayed_send(self, index_wait_step, index_atom_v);
}

}  // namespace

search_session_actor::behavior_type search_session(search_session_actor::stateful_pointer<search_session_state> self,
                                                   std::shared_ptr<const search_session_config> cfg) {
  accept_fault_delays(self);
  return {
    [self, cfg](search_atom, search_call& call) -> caf::result<search_outcome> {
      auto out = page_of(*cfg, call);
      if (out.behind == 0) return out;
      // Read your writes: the page waits (bounded) for this node's index to apply the position.
      auto promise = self->make_response_promise<search_outcome>();
      bool looking = !self->state.waiting.empty();
      self->state.waiting.push_back({std::move(call), promise, out.behind, std::chrono::steady_clock::now() + index_wait});
      if (!looking) self->delayed_send(self, index_wait_step, index_atom_v);
      return promise;
    },
    [self, cfg](index_atom) { answer_waiting(self, *cfg); },
    [cfg](answered_atom, session_record& r) -> caf::result<std::vector<std::string>> {
      // Unrecorded, hits could be answered again by a later page: this page fails instead (503).
      auto fresh = guarded_sessions([&] {
        auto now = domain::now_ms();
        return r.opens ? cfg->sessions->opened(r.search_id, r.owner, std::move(r.request), r.position, r.hits, now)
                       : cfg->sessions->answered(r.search_id, r.owner, r.hits, now);
      });
      if (!fresh) return caf::make_error(backend_error::storage_failure, "search sessions unavailable");
      return std::move(*fresh);
    },
  };
}

search_sweeper_actor::behavior_type search_session_sweeper(search_sweeper_actor::pointer self,
                                                           std::shared_ptr<const search_sweeper_config> cfg) {
  accept_fault_delays(self);
  auto every = std::chrono::milliseconds{cfg->sessions->sweep_every_ms()};
  if (every.count() > 0) self->send(self, prune_atom_v);
  return {
    [self, cfg, every](prune_atom) {
      try {
        bool vacuumed = cfg->sessions->sweep(domain::now_ms());
        cfg->sweeps.increment();
        if (vacuumed) cfg->vacuums.increment();
      } catch (const std::exception& e) {
        spdlog::error("search: the search sessions could not be swept: {}", e.what());
      }
      self->delayed_send(self, every, prune_atom_v);
    },
  };
}

search_session_actor::behavior_type search_session_front(search_session_actor::pointer self,
                                                         std::vector<search_session_actor> workers) {
  for (const auto& w : workers) self->link_to(w);
  accept_fault_delays(self);  // a delay holds every message of the front (the whole concern)
  auto next = [workers, turn = std::make_shared<std::size_t>(0)] { return workers[(*turn)++ % workers.size()]; };
  return {
    [](index_atom) {},  // each worker looks after its own waiting pages
    [self, next](search_atom, search_call& call) -> caf::result<search_outcome> {
      return self->delegate(next(), search_atom_v, std::move(call));
    },
    [self, next](answered_atom, session_record& r) -> caf::result<std::vector<std::string>> {
      return self->delegate(next(), answered_atom_v, std::move(r));
    },
  };
}

}  // namespace cl::actors
