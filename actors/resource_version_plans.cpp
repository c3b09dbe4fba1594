// Resource snapshots: POST and GET /resources/{id}/versions.

#include "actors/access.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_paging.hpp"
#include "actors/plan_write.hpp"
#include "actors/plan_support.hpp"
#include "actors/resource_stitch.hpp"
#include "actors/plans.hpp"
#include "actors/resource_support.hpp"
#include "domain/field_mask.hpp"
#include "domain/base64url.hpp"
#include "domain/content_format.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/layer3.hpp"
#include "domain/negotiation.hpp"
#include "domain/page_token.hpp"
#include "domain/records.hpp"
#include "domain/resource.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <map>

namespace cl::actors {

namespace json = boost::json;

void plan_create_version(const plan_run& run) {
  if (!run->request.body.empty()) {
    auto parsed = json_body(run->request);
    if (auto* refusal = std::get_if<domain::api_reply>(&parsed)) return run.answer(std::move(*refusal));
    if (auto refusal = unknown_members(std::get<json::object>(parsed), {})) return run.answer(std::move(*refusal));
  }
  auto id = run->param("id");
  auto w = begin_resource_write(run);
  if (!w) return;
  storage::mutation snapshot = [who = w->who, id, outcome = w->outcome, policy = w->policy, use = w->use](storage::write_txn& tx) {
    auto current = tx.resources().get(who.tenant_id, id);
    if (!current) {
      outcome->refusal = domain::api_error{domain::error_id::resource_not_found, "No such Resource exists in this tenant.", {}};
      return false;
    }
    auto version = tx.resources().header(who.tenant_id, id)->version;
    std::string hash;
    auto answer = [&](int status, const std::string& record) {
      outcome->reply = resource_answer(tx, *policy, who.tenant_id, status, record, use, &hash);
      outcome->reply->headers.emplace_back("Location", "/v0/content-lake/resources/" + id + "?version=" + version);
      return true;
    };
    // This content is snapshotted already: the same version, 200.
    if (auto existing = tx.resources().version(who.tenant_id, id, version)) return answer(200, *existing);
    tx.resources().put_version(who.tenant_id, id, version, *current);
    record_activity(tx, who, "VERSION", "resource", id, {}, {}, domain::iso8601_now());
    answer(201, *current);
    log_change(tx, who.tenant_id, storage::change_op::snapshotted, storage::change_kind::resource, id, {version, hash, {}});
    return true;
  };
  write_with_access(run, id, domain::access_role::writer, std::move(snapshot), w->outcome, "The snapshot");
}

void plan_list_versions(const plan_run& run) {
  auto id = run->param("id");
  auto purpose = request_use(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&purpose)) return run.answer(std::move(*refusal));
  auto use = std::get<domain::content_use>(purpose);
  auto masked = list_mask(*run);
  if (auto* refusal = std::get_if<domain::api_reply>(&masked)) return run.answer(std::move(*refusal));
  auto mask = std::get<std::shared_ptr<const domain::field_mask>>(std::move(masked));
  with_access(run, id, domain::access_role::reader, [run, id, use, mask](domain::access_role) {
    // Summaries: each snapshot without its content (read one with ?version= for that), with
    // its rights as a `?version=` read resolves them; masked as reads with `fields`.
    auto summarize = resource_items(run, use, true, mask);
    storage::version_query q;
    q.tenant = run->who.tenant_id;
    q.resource_id = id;
    answer_query(run, "versions", {{"resource_id", id}},
                 query_pages(run, run->actors->get<reader_actor>(), "record reader", q), std::move(summarize),
                 /*masks_items=*/true);
  });
}

}  // namespace cl::actors
