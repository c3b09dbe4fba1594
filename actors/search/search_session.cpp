#include "actors/search/search_session.hpp"
#include "actors/fault_hooks.hpp"

#include "domain/clock.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <mutex>
#include <unordered_set>

namespace cl::actors {

namespace {

domain::api_error session_missing(domain::session_miss miss) {
  if (miss == domain::session_miss::expired)
    return {domain::error_id::search_session_expired, "The search session expired; start a new search.", {}};
  return {domain::error_id::search_session_not_found, "No such search session; start a new search.", {}};
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
/// revoked grant, a burst of writes ahead of it): every candidate's grant is read again from the
/// record store, and one that no longer holds is ranked past (the list ranks again while the
/// budget lasts), so a page is the truth of now, not of the index.
search_stream rank_list(const search_session_config& cfg, const search_call& call, storage::search_query& q,
                        const std::vector<std::string>& returned, const search_stream_call& asked, std::size_t wanted,
                        int& left) {
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
    for (auto& h : page.hits) {
      skip.insert(h.id);  // taken or refused: a further round ranks past it
      if (storage::holds_any_grant(cfg.store->grants(), call.owner.tenant, call.principals, h.id)) out.hits.push_back(std::move(h));
    }
    if (out.hits.size() >= wanted || page.exhausted) break;
  }
  return out;
}

}  // namespace

search_session_actor::behavior_type search_session(search_session_actor::stateful_pointer<search_session_state> self,
                                                   std::shared_ptr<const search_session_config> cfg) {
  accept_fault_delays(self);
  return {
    [cfg](search_atom, search_call& call) -> search_outcome {
      auto& shared = *cfg->sessions;
      auto now = domain::now_ms();
      search_outcome out;
      if (cfg->index->is_rebuilding()) {
        // Pages of a half-built index would miss Resources it has not reached: none until it is done.
        out.error = domain::api_error{domain::error_id::search_index_rebuilding,
                                      "The search index is being rebuilt from the stored Resources; retry shortly.", {}};
        return out;
      }
      // What the session answered so far, copied under the lock (bounded by max_returned); the
      // queries then run without it, in parallel with other sessions' queries.
      std::vector<std::string> returned;
      bool continued = !call.search_id.empty();
      if (continued) {
        std::lock_guard lock{shared.mutex};
        auto [found, miss] = shared.store->find(call.search_id, call.owner, now);
        if (!found) {
          out.error = session_missing(miss.value_or(domain::session_miss::unknown));
          return out;
        }
        out.search_id = call.search_id;
        out.request = found->request;
        out.answered_before = found->returned.size();
        returned.assign(found->returned.begin(), found->returned.end());
      } else {
        out.request = std::move(call.request);
      }
      if (out.answered_before >= cfg->limits.max_returned) {  // a session answers a bounded number of hits
        out.session_full = true;
        return out;
      }
      auto room = cfg->limits.max_returned - out.answered_before;
      int left = call.budget;
      auto rank = [&](const search_stream_call& asked, bool metadata_only) {
        auto q = index_query(call.owner, out.request, call);
        q.metadata_only = metadata_only;
        return rank_list(*cfg, call, q, returned, asked, std::min(asked.candidates, room), left);
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
      // A new search becomes a session once its query has been accepted.
      if (!continued) {
        std::lock_guard lock{shared.mutex};
        out.search_id = shared.store->open(call.owner, out.request, now);
      }
      return out;
    },
    [cfg](answered_atom, const domain::session_owner& owner, const std::string& id,
          std::vector<std::string>& hits) -> std::vector<std::string> {
      std::lock_guard lock{cfg->sessions->mutex};
      auto& store = *cfg->sessions->store;
      if (!store.find(id, owner, domain::now_ms()).first) return hits;
      return store.answered(id, hits);
    },
  };
}

}  // namespace cl::actors
