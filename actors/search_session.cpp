#include "actors/search_session.hpp"

#include "domain/clock.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

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
  q.page_size = call.candidates;
  return q;
}

}  // namespace

search_session_actor::behavior_type search_session(search_session_actor::stateful_pointer<search_session_state> self,
                                                   std::shared_ptr<const search_session_config> cfg) {
  self->state.sessions = std::make_unique<domain::memory_session_store>(cfg->limits);
  return {
    [self, cfg](search_atom, search_call& call) -> search_outcome {
      auto& sessions = *self->state.sessions;
      auto now = domain::now_ms();
      search_outcome out;
      const domain::search_session* session = nullptr;
      if (!call.search_id.empty()) {
        auto [found, miss] = sessions.find(call.search_id, call.owner, now);
        if (!found) {
          out.error = session_missing(miss.value_or(domain::session_miss::unknown));
          return out;
        }
        session = found;
        out.search_id = call.search_id;
        out.request = found->request;
      } else {
        out.request = std::move(call.request);
      }
      std::unordered_set<std::string> exclude(call.exclude.begin(), call.exclude.end());
      std::size_t before = session ? session->returned.size() : 0;
      out.answered_before = before;
      if (before >= cfg->limits.max_returned) {  // a session answers a bounded number of hits
        out.exhausted = true;
        return out;
      }
      auto q = index_query(call.owner, out.request, call);
      q.page_size = std::min(call.candidates, cfg->limits.max_returned - before);
      q.skip = [session, &exclude](const std::string& id) {
        return exclude.count(id) > 0 || (session && session->returned.count(id) > 0);
      };
      try {
        auto page = cfg->index->search(q);
        out.hits = std::move(page.hits);
        out.total_estimate = page.total_estimate;
        out.exhausted = page.exhausted;
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
      if (!session) out.search_id = sessions.open(call.owner, out.request, now);
      return out;
    },
    [self](answered_atom, const domain::session_owner& owner, const std::string& id,
           std::vector<std::string>& hits) -> std::vector<std::string> {
      auto& sessions = *self->state.sessions;
      if (!sessions.find(id, owner, domain::now_ms()).first) return hits;
      return sessions.answered(id, hits);
    },
  };
}

}  // namespace cl::actors
