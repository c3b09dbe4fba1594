#include "actors/resource_stitch.hpp"

#include "actors/plan_support.hpp"
#include "domain/content_format.hpp"
#include "domain/json_text.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>


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
  void fail(std::string_view concern) {
    if (!failure) failure = backend_unavailable(concern);
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

void stitch_resource(caf::event_based_actor* self, const std::shared_ptr<const request_context>& ctx,
                     const domain::field_mask& mask, std::shared_ptr<json::object> full,
                     std::function<void(std::optional<domain::api_reply>)> k) {
  auto join = std::make_shared<stitch_join>();
  join->k = std::move(k);
  auto id = member(*full, "id");
  const auto& tenant = ctx->who.tenant_id;
  auto get = [&](storage::catalog_kind kind, std::string id, std::function<void(fetch_outcome&)> use) {
    if (!ctx->actors->get<reader_actor>()) return join->fail("record reader"), void();
    ++join->pending;
    self->request(ctx->actors->get<reader_actor>(), ctx->timeout, fetch_atom_v, storage::record_ref{kind, tenant, std::move(id)})
      .then([join, use](fetch_outcome& found) { use(found), join->arrive(); },
            [join](caf::error&) { join->fail("record reader"); });
  };
  auto list = [&](auto query, std::function<void(scan_result&)> use) {
    if (!ctx->actors->get<reader_actor>()) return join->fail("record reader"), void();
    ++join->pending;
    query.limit = stitch_limit;
    self->request(ctx->actors->get<reader_actor>(), ctx->timeout, list_atom_v, std::move(query))
      .then([join, use](scan_result& page) { use(page), join->arrive(); },
            [join](caf::error&) { join->fail("record reader"); });
  };

  if (mask.names("source")) {
    auto source_id = member(*full, "source_id");
    if (!source_id.empty())
      get(storage::catalog_kind::source, source_id, [full](fetch_outcome& f) {
        if (f.found) (*full)["source"] = json::parse(f.json);
      });
  }
  if (mask.names("work")) {
    auto work_id = member(*full, "work_id");
    if (!work_id.empty())
      get(storage::catalog_kind::work, work_id, [full](fetch_outcome& f) {
        if (f.found) (*full)["work"] = json::parse(f.json);
      });
  }
  if (mask.names("provenance")) {
    // Activities about this Resource, oldest first (activity ids follow creation time), through
    // the store's by-Resource index.
    storage::activity_query q;
    q.tenant = tenant;
    q.resource_id = id;
    list(q, [full](scan_result& page) {
      json::array activities;
      for (const auto& [key, value] : page.entries) activities.push_back(json::parse(value));
      bool complete = page.exhausted && activities.size() < stitch_limit;
      (*full)["provenance"] = json::object{{"activities", std::move(activities)}, {"complete", complete}};
    });
  }
  if (mask.names("lineage")) {
    // The Resource's snapshots, oldest first: where its current version comes from.
    storage::version_query q;
    q.tenant = tenant;
    q.resource_id = id;
    list(q, [full](scan_result& page) {
      json::array versions;
      for (const auto& [key, value] : page.entries) {
        auto snapshot = json::parse(value).as_object();
        versions.push_back(json::object{{"version", snapshot["version"]}, {"hash_content", snapshot["hash_content"]},
                                        {"updated", snapshot["updated"]}});
      }
      bool complete = page.exhausted && versions.size() < stitch_limit;
      (*full)["lineage"] = json::object{{"current_version", (*full)["version"]},
                                        {"versions", std::move(versions)},
                                        {"complete", complete}};
    });
  }
  if (mask.names("entities")) {
    json::array entities;
    if (auto* content = full->if_contains("content")) entities = domain::entity_overlay(*content);
    (*full)["entities"] = json::object{{"entities", std::move(entities)}};
  }
  bool commercial = names_commercial_terms(mask) || (mask.all && ctx->who.has_scope("contracts.commercial.read"));
  if (commercial && full->contains("rights")) {
    auto& rights = (*full)["rights"].as_object();
    rights["commercial_terms"] = json::array{};
    for (const auto& b : rights["basis"].as_array()) {
      auto contract_id = member(b.as_object(), "contract_id");
      auto version = b.as_object().at("contract_version").as_int64();
      if (!ctx->actors->get<contracts_actor>()) {
        join->fail("contracts");
        continue;
      }
      ++join->pending;
      self->request(ctx->actors->get<contracts_actor>(), ctx->timeout, fetch_atom_v, tenant, contract_id, version)
        .then(
          [join, full, contract_id, version](fetch_outcome& found) {
            if (found.found) {
              auto contract = json::parse(found.json).as_object();
              json::object entry{{"contract_id", contract_id}, {"contract_version", version}};
              if (auto* c = contract.if_contains("commercial_terms"))
                for (const auto& [name, value] : c->as_object()) entry[name] = value;
              (*full)["rights"].as_object()["commercial_terms"].as_array().push_back(std::move(entry));
            }
            join->arrive();
          },
          [join](caf::error&) { join->fail("contracts"); });
    }
  }
  join->arrive();
}

}  // namespace cl::actors
