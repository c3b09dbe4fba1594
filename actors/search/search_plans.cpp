// Plans of the search route group: one route, POST /v0/content-lake/search, for a new search and
// for the next page of a session. See actors/search/search_plans.hpp for the layer-3 rule of hits.

#include "actors/search/search_plans.hpp"

#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_support.hpp"
#include "actors/search/search_messages.hpp"
#include "domain/clock.hpp"
#include "domain/json_text.hpp"
#include "domain/field_mask.hpp"
#include "domain/layer3.hpp"
#include "domain/odrl.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace cl::actors {

namespace json = boost::json;

namespace {

using domain::error_id;

constexpr std::size_t max_query_chars = 1000;  ///< code points
constexpr std::size_t max_page_size = 100;
constexpr std::size_t default_page_size = 20;
/// Index rankings one answer runs at most, in all: the plan's rounds (to fill the page past hits
/// layer 3 refuses), each list's re-rankings past revoked grants (the session actor), and the
/// index's own re-runs (a reader overtaken by a commit, a remembered id gone stale). One budget:
/// the worst case of an answer is this many rankings (docs/architecture.md, Search).
constexpr int max_index_runs = 8;

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

/// An array of non-empty strings (at most 100), or the reply refusing it.
std::variant<std::vector<std::string>, domain::api_reply> strings(const json::value& v, const std::string& field) {
  if (!v.is_array() || v.as_array().size() > 100)
    return invalid_field(field, "must be an array of at most 100 strings");
  std::vector<std::string> out;
  for (const auto& e : v.as_array()) {
    if (!e.is_string() || e.as_string().empty()) return invalid_field(field, "must hold non-empty strings");
    out.emplace_back(e.as_string());
  }
  return out;
}

/// The search a new-search body asks for, or the reply refusing the body.
std::variant<domain::search_request, domain::api_reply> parse_request(const json::object& body) {
  domain::search_request r;
  auto* query = body.if_contains("query");
  if (!query || !query->is_string()) return invalid_field("/query", "is required (a string), or search_id to continue");
  r.query = std::string{query->as_string()};
  if (r.query.find_first_not_of(" \t\r\n") == std::string::npos) return invalid_field("/query", "must not be empty");
  if (code_points(r.query) > max_query_chars)
    return domain::api_reply::failure(error_id::limit_exceeded, "The query is longer than 1000 characters.",
                                      {{"/query", "at most 1000 characters"}});
  if (auto* f = body.if_contains("filter")) {
    if (!f->is_object()) return invalid_field("/filter", "must be an object");
    const auto& filter = f->as_object();
    if (auto refusal = unknown_members(filter, {"type", "language", "work_id", "usable"})) return std::move(*refusal);
    if (auto* v = filter.if_contains("type")) {
      auto types = strings(*v, "/filter/type");
      if (auto* e = std::get_if<domain::api_reply>(&types)) return std::move(*e);
      r.types = std::get<std::vector<std::string>>(std::move(types));
    }
    if (auto* v = filter.if_contains("language")) {
      auto languages = strings(*v, "/filter/language");
      if (auto* e = std::get_if<domain::api_reply>(&languages)) return std::move(*e);
      r.languages = std::get<std::vector<std::string>>(std::move(languages));
    }
    if (auto* v = filter.if_contains("work_id")) {
      if (!v->is_string() || v->as_string().empty()) return invalid_field("/filter/work_id", "must be a Work id");
      r.work_id = std::string{v->as_string()};
    }
    if (auto* v = filter.if_contains("usable")) {
      if (!v->is_bool()) return invalid_field("/filter/usable", "must be true or false");
      r.usable_only = v->as_bool();
    }
  }
  return r;
}

/// What one answer has gathered so far over its rounds.
struct gathered {
  search_call call;
  std::size_t page_size = default_page_size;
  domain::content_use use;
  std::vector<std::string> ids;
  json::array hits;
  std::size_t answered_before = 0;
  bool exhausted = false;
  int rounds = 0;
  int budget = max_index_runs;  ///< index rankings left to this answer
  std::uint64_t opened_at = 0;   ///< a new search: the position of the index that ranked its first round
  std::optional<domain::field_mask> mask;  ///< `fields` of the request: each hit as a masked read shows it
  std::string tenant, principal;           ///< the caller, for a policy under `rights.odrl`
  std::unordered_map<std::string, std::string> policies;  ///< hit id -> its policy, spliced in when written
};

/// A hit as the caller sees it: rights resolved now; without its snippet when those rights refuse
/// the request's use (it was then found and scored by its metadata alone).
json::object hit_json(gathered& g, const storage::search_hit& h, const domain::resolved_rights& rights,
                      bool content_allowed) {
  json::object o{{"id", h.id},
                 {"title", h.title},
                 {"type", h.type},
                 {"language", h.language.empty() ? json::value{} : json::value(h.language)},
                 {"work_id", h.work_id.empty() ? json::value{} : json::value(h.work_id)},
                 {"score", h.score},
                 {"snippet", h.snippet},
                 {"rights", json::parse(rights.json)}};
  if (!content_allowed)
    for (auto member : domain::content_derived_members()) o.erase(member);
  if (!g.mask) return o;
  if (g.mask->names_member("rights", "odrl")) {
    // A hit is a Resource, not one of its versions: the policy's target is its uri without one.
    auto target = "cl://" + g.tenant + "/" + h.type + "/" + h.id;
    g.policies[h.id] = domain::odrl_policy(rights, {g.tenant, g.principal, target});
    o["rights"].as_object()["odrl"] = nullptr;  // where the policy goes when the hit is written
  }
  if (g.mask->all) return o;  // `*` (and rights.odrl): the whole hit
  auto masked = domain::apply_resource_mask(o, *g.mask);
  masked["id"] = h.id;  // always: a page names its hits
  return masked;
}

void answer(const plan_run& run, const std::shared_ptr<gathered>& g) {
  ask(
    run, run->actors->get<search_session_actor>(), "search sessions",
    [run, g](std::vector<std::string>& fresh) {
      // A concurrent page of the same session may have answered some of these: never twice.
      std::unordered_set<std::string> mine(fresh.begin(), fresh.end());
      // Written by hand so that `score` is a plain decimal (Boost.JSON writes 8.08E1), into the
      // body at once (a page with policies runs to tens of kilobytes: not copied again).
      std::size_t policy_bytes = 0;
      for (const auto& [id, text] : g->policies) policy_bytes += text.size();
      std::string body = "{\"search_id\":" + domain::json_string(g->call.search_id) + ",\"hits\":[";
      body.reserve(body.size() + g->hits.size() * 768 + policy_bytes + 64);
      std::size_t answered = 0;
      for (auto& h : g->hits) {
        auto& o = h.as_object();
        if (!mine.count(std::string{o.at("id").as_string()})) continue;
        std::optional<double> score;
        if (auto* s = o.if_contains("score")) {
          score = s->to_number<double>();
          o.erase("score");
        }
        auto policy = g->policies.find(std::string{o.at("id").as_string()});
        auto text = domain::serialize_with_policy(std::move(o), policy == g->policies.end() ? "" : policy->second);
        if (answered++) body += ',';
        if (!score) {
          body += text;
          continue;
        }
        body.append(text, 0, text.size() - 1);
        body += ",\"score\":";
        body += domain::json_decimal(*score);
        body += '}';
      }
      // Counted only from hits answered: the index's estimate, or the candidates an answer ranked
      // further, would count (or depend on) Resources matched through content the caller may not
      // use (layer 3). A lower bound until exhausted, then exact.
      auto total = g->answered_before + answered;
      body += "],\"total_estimate\":" + std::to_string(total) + ",\"exhausted\":" + (g->exhausted ? "true" : "false") + "}";
      auto r = json_reply(200, std::move(body));
      r.headers.emplace_back("Cache-Control", "no-store");
      run.answer(std::move(r));
    },
    answered_atom_v,
    session_record{g->call.owner, g->call.search_id, g->ids, g->call.unopened, g->call.request, g->opened_at});
}

/// A candidate one of the two lists may answer: which hit, of which list, with its rights.
struct pick {
  const storage::search_hit* hit;
  std::size_t rights;  ///< index into the round's rights
  bool content_allowed;
};

/// The lowest score of a list's candidates: nothing it ranks later scores above it. Nothing left:
/// no bound; candidates asked but none answered (all of them revoked meanwhile): everything waits.
double bound_of(const search_stream& s) {
  if (s.exhausted) return -std::numeric_limits<double>::infinity();
  if (s.hits.empty()) return std::numeric_limits<double>::infinity();
  double low = s.hits.front().score;
  for (const auto& h : s.hits) low = std::min(low, h.score);
  return low;
}

/// The session call of the next round, with what is left of the answer's budget.
search_call with_budget(const std::shared_ptr<gathered>& g) {
  g->call.budget = g->budget;
  return g->call;
}

/// One round: the next candidates of both lists from the session actor, their rights, layer 3
/// per hit, then the page merged by score; another round while the page is short, more is ranked,
/// and the rounds last.
///
/// Layer 3 decides which list answers a Resource: the full list (title and text) when the caller
/// may use its content, the metadata list (the whole query over its title alone, ranked by that)
/// when it may not. A Resource the caller may not use the content of is thus found, excluded and
/// ranked by its title only, whatever its content holds (`cobalt -tangerine` or `NOT tangerine`
/// never test its words).
void round(const plan_run& run, const std::shared_ptr<gathered>& g) {
  ask(
    run, run->actors->get<search_session_actor>(), "search sessions",
    [run, g](search_outcome& o) {
      if (o.error) {
        if (o.error->id == error_id::backend_unavailable) return run.answer(backend_unavailable("search index", backend_error::storage_failure));
        if (o.error->id == error_id::search_index_rebuilding || o.error->id == error_id::search_index_behind) {
          auto r = domain::api_reply::from(std::move(*o.error));
          r.retry_after_seconds = o.error->id == error_id::search_index_rebuilding ? 5 : 1;
          return run.answer(std::move(r));
        }
        return run.answer(domain::api_reply::from(std::move(*o.error)));
      }
      if (g->call.search_id.empty()) {  // a new search: its session opens with this page's record
        g->call.search_id = o.search_id;
        g->call.request = o.request;
        g->call.unopened = true;
        g->opened_at = o.position;
      }
      if (g->rounds == 0) g->answered_before = o.answered_before;
      ++g->rounds;
      g->budget -= std::max(1, o.spent);
      if (o.session_full) {
        g->exhausted = true;
        return answer(run, g);
      }
      std::vector<std::string> works;
      for (const auto* list : {&o.full, &o.metadata})
        for (const auto& h : list->hits) works.push_back(h.work_id);
      auto shared = std::make_shared<search_outcome>(std::move(o));
      with_rights_of(run, std::move(works), [run, g, shared](const std::vector<domain::resolved_rights>& rights) {
        const auto& request = shared->request;
        const auto& full = shared->full;
        const auto& metadata = shared->metadata;
        std::vector<pick> from_full, from_metadata;
        for (std::size_t i = 0; i < full.hits.size(); ++i) {
          bool allowed = !domain::check_content_use(rights[i], g->use);
          bool usable = allowed && (!g->use.usage.empty() || rights[i].usable);
          // Not this list's to answer: ranked past in later rounds.
          if (!allowed || (request.usable_only && !usable))
            g->call.full.exclude.push_back(full.hits[i].id);
          else
            from_full.push_back({&full.hits[i], i, true});
        }
        for (std::size_t i = 0; i < metadata.hits.size(); ++i) {
          auto r = full.hits.size() + i;
          // A hit whose content the caller may use is the full list's; with `usable`, no hit is
          // this list's (refused hits are never usable).
          if (request.usable_only || !domain::check_content_use(rights[r], g->use))
            g->call.metadata.exclude.push_back(metadata.hits[i].id);
          else
            from_metadata.push_back({&metadata.hits[i], r, false});
        }
        // Merged by score. A candidate is answered only when the other list cannot rank a better
        // one later (its lowest candidate scores no more), unless this is the last round.
        bool last = g->budget <= 0;
        auto full_bound = bound_of(full), metadata_bound = bound_of(metadata);
        std::size_t a = 0, b = 0;
        while (g->ids.size() < g->page_size && (a < from_full.size() || b < from_metadata.size())) {
          bool take_full = b == from_metadata.size()
                           || (a < from_full.size() && from_full[a].hit->score >= from_metadata[b].hit->score);
          const auto& p = take_full ? from_full[a] : from_metadata[b];
          if (!last && p.hit->score < (take_full ? metadata_bound : full_bound)) break;
          g->ids.push_back(p.hit->id);
          g->hits.push_back(hit_json(*g, *p.hit, rights[p.rights], p.content_allowed));
          g->call.full.exclude.push_back(p.hit->id);
          g->call.metadata.exclude.push_back(p.hit->id);
          ++(take_full ? a : b);
        }
        auto waiting_full = from_full.size() - a, waiting_metadata = from_metadata.size() - b;
        bool full_done = full.exhausted && waiting_full == 0;
        bool metadata_done = (metadata.exhausted || request.usable_only) && waiting_metadata == 0;
        auto short_by = g->page_size - g->ids.size();
        if (short_by > 0 && !(full_done && metadata_done) && !last) {
          // Ask each list for what waits of it again (not answered yet, so not passed over) and
          // twice as many as missing.
          g->call.full.candidates = full_done ? 0 : std::min(max_page_size, waiting_full + 2 * short_by);
          g->call.metadata.candidates = metadata_done ? 0 : std::min(max_page_size, waiting_metadata + 2 * short_by);
          return round(run, g);
        }
        g->exhausted = full_done && metadata_done;
        answer(run, g);
      });
    },
    search_atom_v, with_budget(g));
}

}  // namespace

void plan_search(const plan_run& run) {
  auto use = request_use(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&use)) return run.answer(std::move(*refusal));
  auto parsed = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
  const auto& body = std::get<json::object>(parsed);
  if (auto refusal = unknown_members(body, {"query", "filter", "page_size", "search_id", "fields"}))
    return run.answer(std::move(*refusal));
  auto g = std::make_shared<gathered>();
  g->tenant = run->who.tenant_id;
  g->principal = run->who.subject;
  if (auto* v = body.if_contains("fields")) {
    // Like the query parameter of a read: comma-separated paths; per page, not kept by the session.
    if (!v->is_string()) return run.answer(invalid_field("/fields", "must be a string of comma-separated field paths"));
    auto parsed = domain::parse_field_mask(v->as_string(), domain::search_hit_fields());
    if (auto* e = std::get_if<domain::api_error>(&parsed)) return run.answer(domain::api_reply::from(std::move(*e)));
    g->mask = std::get<domain::field_mask>(std::move(parsed));
  }
  g->use = std::get<domain::content_use>(use);
  g->call.owner = domain::session_owner{run->who.tenant_id, run->who.subject, run->who.client_id};
  g->call.at_least = run->at_least;
  if (auto* v = body.if_contains("page_size")) {
    if (!v->is_int64() || v->as_int64() < 1 || v->as_int64() > static_cast<std::int64_t>(max_page_size))
      return run.answer(invalid_field("/page_size", "must be a whole number from 1 to 100"));
    g->page_size = static_cast<std::size_t>(v->as_int64());
  }
  if (auto* v = body.if_contains("search_id")) {
    if (!v->is_string() || v->as_string().empty()) return run.answer(invalid_field("/search_id", "must be a srch_ id"));
    if (body.contains("query") || body.contains("filter"))
      return run.answer(invalid_field("/search_id", "continues a search: send it without query and filter"));
    g->call.search_id = std::string{v->as_string()};
  } else {
    auto request = parse_request(body);
    if (auto* refusal = std::get_if<domain::api_reply>(&request)) return run.answer(std::move(*refusal));
    g->call.request = std::get<domain::search_request>(std::move(request));
  }
  with_principals(run, [run, g](std::vector<std::string> principals) {
    g->call.principals = std::move(principals);
    // A list asked for nothing answers exhausted at once. The full list only where the tenant's
    // contracts can allow the use somewhere, the metadata list only where they can refuse it:
    // a tenant whose content is all readable pays one index query a round, not two.
    auto lists = [run, g](bool allowed, bool refused) {
      g->call.full.candidates = allowed ? g->page_size : 0;
      // Refused hits never pass `usable`: with it, the metadata list has nothing to answer (a
      // continuation learns it from its session in the first round).
      g->call.metadata.candidates = refused && !g->call.request.usable_only ? g->page_size : 0;
      round(run, g);
    };
    // Kept by the rights resolver for the current rights epoch; a miss asks it.
    auto epoch = run->actors->rights_epoch ? run->actors->rights_epoch->load() : 0;
    auto cached = run->actors->possible_cache && run->actors->caches_current() ? run->actors->possible_cache->find(
                    possible_cache_key(run->who.tenant_id, g->use.usage, epoch), domain::now_seconds())
                                                                               : std::nullopt;
    if (cached) return lists(cached->first, cached->second);
    ask(run, run->actors->get<rights_actor>(), "rights resolver", std::move(lists), possible_atom_v, run->who.tenant_id,
        g->use.usage);
  });
}

}  // namespace cl::actors
