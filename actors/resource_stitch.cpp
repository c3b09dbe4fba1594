#include "actors/resource_stitch.hpp"

#include "actors/plan_support.hpp"
#include "domain/content_format.hpp"
#include "domain/json_text.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <tuple>


namespace cl::actors {

namespace json = boost::json;

namespace {

constexpr std::size_t stitch_limit = 100;  ///< activities / versions shown in provenance / lineage

/// Counts the outstanding parts; the last one to arrive calls `k`.
struct stitch_join {
  int pending = 1;  ///< one for the launching call itself
  std::optional<domain::api_reply> failure;
  std::function<void(std::optional<domain::api_reply>)> k;
  void arrive() {
    if (--pending == 0) k(std::move(failure));
  }
  void fail(std::string_view concern, backend_error why) {
    if (!failure) failure = backend_unavailable(concern, why);
    arrive();
  }
};

std::string member(const json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_string() ? std::string{v->as_string()} : std::string{};
}

}  // namespace

bool names_commercial_terms(const domain::field_mask& mask) {
  for (const auto& p : mask.paths)
    if (p.size() >= 2 && p[0] == "rights" && p[1] == "commercial_terms") return true;
  return false;
}

namespace {

/// One stitching in progress: the Resource being completed and the parts it waits for.
struct stitching {
  plan_run run;  ///< asks with its coordinator and timeout; answers through `join`, not `run`
  std::shared_ptr<json::object> full;
  std::shared_ptr<stitch_join> join;

  const std::string& tenant() const { return run->who.tenant_id; }

  /// Fetches one Work, Source or Agent; `use` runs when it arrives.
  void get(storage::catalog_kind kind, std::string id, std::function<void(fetch_outcome&)> use) const {
    const auto& reader = run->actors->get<reader_actor>();
    if (!reader) return join->fail("record reader", backend_error::gone);
    ++join->pending;
    run.self()
      ->request(reader, run->timeout, fetch_atom_v, storage::record_ref{kind, tenant(), std::move(id)})
      .then([join = join, use](fetch_outcome& found) { use(found), join->arrive(); },
            [join = join](caf::error& e) { join->fail("record reader", classify(e)); });
  }

  /// Reads the first `stitch_limit` entries of a list query; `use` runs when they arrive.
  template <class Query>
  void list(Query query, std::function<void(scan_result&)> use) const {
    const auto& reader = run->actors->get<reader_actor>();
    if (!reader) return join->fail("record reader", backend_error::gone);
    ++join->pending;
    query.limit = stitch_limit;
    run.self()
      ->request(reader, run->timeout, list_atom_v, std::move(query))
      .then([join = join, use](scan_result& page) { use(page), join->arrive(); },
            [join = join](caf::error& e) { join->fail("record reader", classify(e)); });
  }
};

/// `source` and `work`: the records the Resource names, in full.
void stitch_catalog(const stitching& st, const domain::field_mask& mask) {
  auto full = st.full;
  for (auto [name, id_member, kind] : {std::tuple{"source", "source_id", storage::catalog_kind::source},
                                       std::tuple{"work", "work_id", storage::catalog_kind::work}}) {
    if (!mask.names(name)) continue;
    auto id = member(*full, id_member);
    if (id.empty()) continue;
    st.get(kind, id, [full, name = std::string{name}](fetch_outcome& f) {
      if (f.found) (*full)[name] = json::parse(f.json);
    });
  }
}

/// `provenance`: Activities about this Resource, oldest first (activity ids follow creation
/// time), through the store's by-Resource index.
void stitch_provenance(const stitching& st, const std::string& id) {
  storage::activity_query q;
  q.tenant = st.tenant();
  q.resource_id = id;
  st.list(q, [full = st.full](scan_result& page) {
    json::array activities;
    for (const auto& [key, value] : page.entries) activities.push_back(json::parse(value));
    bool complete = page.exhausted && activities.size() < stitch_limit;
    (*full)["provenance"] = json::object{{"activities", std::move(activities)}, {"complete", complete}};
  });
}

/// `lineage`: the Resource's snapshots, oldest first: where its current version comes from.
void stitch_lineage(const stitching& st, const std::string& id) {
  storage::version_query q;
  q.tenant = st.tenant();
  q.resource_id = id;
  st.list(q, [full = st.full](scan_result& page) {
    json::array versions;
    for (const auto& [key, value] : page.entries) {
      auto snapshot = json::parse(value).as_object();
      versions.push_back(json::object{{"version", snapshot["version"]}, {"hash_content", snapshot["hash_content"]},
                                      {"updated", snapshot["updated"]}});
    }
    bool complete = page.exhausted && versions.size() < stitch_limit;
    (*full)["lineage"] = json::object{
      {"current_version", (*full)["version"]}, {"versions", std::move(versions)}, {"complete", complete}};
  });
}

/// `entities`: the overlay computed from the content (content-derived: layer 3 decides upstream).
void stitch_entities(json::object& full) {
  json::array entities;
  if (auto* content = full.if_contains("content")) entities = domain::entity_overlay(*content);
  full["entities"] = json::object{{"entities", std::move(entities)}};
}

/// `rights.commercial_terms`: the terms of each contract version in the rights' basis.
void stitch_commercial_terms(const stitching& st) {
  auto& rights = (*st.full)["rights"].as_object();
  rights["commercial_terms"] = json::array{};
  for (const auto& b : rights["basis"].as_array()) {
    auto contract_id = member(b.as_object(), "contract_id");
    auto version = b.as_object().at("contract_version").as_int64();
    const auto& contracts = st.run->actors->get<contracts_actor>();
    if (!contracts) {
      st.join->fail("contracts", backend_error::gone);
      continue;
    }
    ++st.join->pending;
    st.run.self()
      ->request(contracts, st.run->timeout, fetch_atom_v, st.tenant(), contract_id, version)
      .then(
        [join = st.join, full = st.full, contract_id, version](fetch_outcome& found) {
          if (found.found) {
            auto contract = json::parse(found.json).as_object();
            json::object entry{{"contract_id", contract_id}, {"contract_version", version}};
            if (auto* c = contract.if_contains("commercial_terms"))
              for (const auto& [name, value] : c->as_object()) entry[name] = value;
            (*full)["rights"].as_object()["commercial_terms"].as_array().push_back(std::move(entry));
          }
          join->arrive();
        },
        [join = st.join](caf::error& e) { join->fail("contracts", classify(e)); });
  }
}

}  // namespace

void stitch_resource(const plan_run& run, const domain::field_mask& mask, std::shared_ptr<json::object> full,
                     std::function<void(std::optional<domain::api_reply>)> k) {
  auto join = std::make_shared<stitch_join>();
  join->k = std::move(k);
  stitching st{run, full, join};
  auto id = member(*full, "id");
  stitch_catalog(st, mask);
  if (mask.names("provenance")) stitch_provenance(st, id);
  if (mask.names("lineage")) stitch_lineage(st, id);
  if (mask.names("entities")) stitch_entities(*full);
  bool commercial = names_commercial_terms(mask) || (mask.all && run->who.has_scope("contracts.commercial.read"));
  if (commercial && full->contains("rights")) stitch_commercial_terms(st);
  join->arrive();
}

}  // namespace cl::actors
