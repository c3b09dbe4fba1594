// Helpers shared by the Resource route plans.

#include "actors/access.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_paging.hpp"
#include "actors/plan_support.hpp"
#include "actors/resource_stitch.hpp"
#include "actors/plans.hpp"
#include "actors/resource_support.hpp"
#include "storage/record_store.hpp"
#include "domain/field_mask.hpp"
#include "domain/base64url.hpp"
#include "domain/content_format.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/layer3.hpp"
#include "domain/negotiation.hpp"
#include "domain/odrl.hpp"
#include "domain/page_token.hpp"
#include "domain/records.hpp"
#include "domain/resource.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <map>

namespace cl::actors {

namespace json = boost::json;

void with_granted_resource(const plan_run& run, const std::string& id, domain::access_role needed,
                           domain::error_id missing, std::function<void(std::shared_ptr<std::string>)> k) {
  with_granted_resource_at(run, id, needed, missing,
                           [k](std::shared_ptr<std::string> record, std::uint64_t) { k(std::move(record)); });
}

void with_granted_resource_at(const plan_run& run, const std::string& id, domain::access_role needed,
                              domain::error_id missing,
                              std::function<void(std::shared_ptr<std::string>, std::uint64_t)> k) {
  with_access(run, id, needed, [run, id, missing, k](domain::access_role) {
    fetch_resource(run, id, [run, k, missing](fetch_outcome& found) {
      if (!found.found) return run.answer(domain::api_reply::failure(missing, "The Resource does not exist."));
      k(std::make_shared<std::string>(std::move(found.json)), found.log_position);
    });
  });
}

void fetch_resource(const plan_run& run, const std::string& id, std::function<void(fetch_outcome&)> k) {
  if (run->actors->records) {
    std::optional<storage::record_store::instant_resource> now;
    try {
      now = run->actors->records->resource_at_once(run->who.tenant_id, id);
    } catch (const std::exception&) {
      now.reset();  // the reader reads it again, and reports a failure as the concern that failed
    }
    if (now && now->answered) {
      fetch_outcome found{now->record.has_value(), now->record ? std::move(*now->record) : std::string{}};
      found.log_position = now->log_position;
      return k(found);
    }
  }
  ask(run, run->actors->get<reader_actor>(), "record reader", std::move(k), fetch_atom_v, run->who.tenant_id, id);
}

namespace {

/// `item` (a Resource as a list shows it) as a read with `mask` shows it.
std::string masked_item(const request_context& ctx, const std::string& item, const domain::resolved_rights& rights,
                        const domain::field_mask& mask) {
  auto o = json::parse(item).as_object();
  std::string policy;
  if (mask.names_member("rights", "odrl")) {
    policy = domain::odrl_policy(rights, {ctx.who.tenant_id, ctx.who.subject, std::string_view{o.at("uri").as_string()}});
    o["rights"].as_object()["odrl"] = nullptr;
  }
  return domain::serialize_with_policy(domain::apply_resource_mask(o, mask), policy);
}

}  // namespace

namespace {
std::vector<std::string> resource_keys(const request_context& ctx, const std::string& id, const std::string& record,
                                       const domain::resolved_rights& rights) {
  auto keys = std::vector<std::string>{ctx.who.tenant_id, id, storage::fields_of(record).work_id};
  for (const auto& [contract, version] : rights.basis) keys.push_back(contract);
  return keys;
}
}  // namespace

void resource_edge_keys(domain::api_reply& r, const request_context& ctx, const std::string& id,
                        const std::string& record, const domain::resolved_rights& rights) {
  edge_keys(r, ctx.who, resource_keys(ctx, id, record, rights), rights.valid_until);
}

std::string resource_edge_key_list(const request_context& ctx, const std::string& id, const std::string& record,
                                   const domain::resolved_rights& rights) {
  return edge_key_list(resource_keys(ctx, id, record, rights));
}

std::variant<std::shared_ptr<const domain::field_mask>, domain::api_reply> list_mask(const request_context& ctx) {
  auto fields = query_param(ctx.request.query, "fields");
  if (fields.empty()) return std::shared_ptr<const domain::field_mask>{};
  auto parsed = domain::parse_field_mask(fields, domain::resource_fields());
  if (auto* e = std::get_if<domain::api_error>(&parsed)) return domain::api_reply::from(std::move(*e));
  auto mask = std::get<domain::field_mask>(std::move(parsed));
  auto refuse = [](const std::string& name) {
    return domain::api_reply::failure(domain::error_id::invalid_argument, name + " is stitched into single reads only.",
                                      {{"fields", name + " is not shown by a list: read the Resource"}});
  };
  for (const char* stitched : {"source", "work", "provenance", "lineage", "entities"})
    if (mask.names_explicitly(stitched)) return refuse(stitched);
  if (mask.names_member("rights", "commercial_terms")) return refuse("rights.commercial_terms");
  return std::make_shared<const domain::field_mask>(std::move(mask));
}

item_presenter resource_items(const plan_run& run, domain::content_use use, bool summary,
                              std::shared_ptr<const domain::field_mask> mask) {
  return [run, use, summary, mask](std::vector<std::string> records,
                                   std::function<void(std::optional<std::vector<std::string>>)> k) {
    if (records.empty()) return k(std::move(records));
    if (!run->actors->get<rights_actor>()) return k(std::nullopt);
    std::vector<std::string> works;
    for (const auto& r : records) works.push_back(storage::fields_of(r).work_id);
    auto shared = std::make_shared<std::vector<std::string>>(std::move(records));
    run.self()
      ->request(run->actors->get<rights_actor>(), run->timeout, resolve_atom_v, run->who.tenant_id, std::move(works))
      .then(
        [run, shared, k, use, summary, mask](std::vector<domain::resolved_rights>& rights) {
          std::vector<std::string> items;
          for (std::size_t i = 0; i < shared->size(); ++i) {
            const auto& record = (*shared)[i];
            auto item = domain::content_as_allowed(
              domain::compose_resource(record, rights[i].json, domain::resource_hash(record, rights[i].digest_input)),
              rights[i], use);
            if (summary) {
              auto o = json::parse(item).as_object();
              o.erase("content");
              o.erase("update_token");
              item = json::serialize(o);
            }
            if (mask) item = masked_item(*run, item, rights[i], *mask);
            items.push_back(std::move(item));
          }
          k(std::move(items));
        },
        [k](caf::error&) { k(std::nullopt); });
  };
}

}  // namespace cl::actors
