// The contracts route group (/v0/contracts, a preview addition): create, read, list, new
// versions, list versions. Reads go to the contracts actor (one record) or the reader (lists);
// writes are one mutation each through the writer. Commercial terms are shown only to tokens
// with contracts.commercial.read; naming them in `fields` without it is 403 SCOPE_MISSING.

#include "actors/contracts.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_paging.hpp"
#include "actors/plan_write.hpp"
#include "actors/plan_support.hpp"
#include "actors/plans.hpp"
#include "domain/contract.hpp"
#include "domain/field_mask.hpp"
#include "domain/ids.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

namespace cl::actors {

namespace json = boost::json;

namespace {

constexpr const char* commercial_scope = "contracts.commercial.read";

bool sees_commercial(const request_context& ctx) { return ctx.who.has_scope(commercial_scope); }

/// The record as this caller may see it.
std::string presented(const request_context& ctx, std::string record) {
  return sees_commercial(ctx) ? record : domain::without_commercial_terms(record);
}

/// List items as this caller may see them.
item_presenter presenter(const std::shared_ptr<const request_context>& ctx) {
  return [ctx](std::vector<std::string> records, std::function<void(std::optional<std::vector<std::string>>)> k) {
    for (auto& r : records) r = presented(*ctx, std::move(r));
    k(std::move(records));
  };
}

const domain::field_schema& contract_schema() {
  static const domain::field_schema schema = [] {
    domain::field_schema s;
    for (const auto& f : domain::contract_fields()) s.children[f].open = true;
    return s;
  }();
  return schema;
}

/// Refuses a body whose `work_ids` names a Work the tenant does not have (inside the write, so
/// the check cannot race a concurrent change).
std::optional<domain::api_error> missing_work(const storage::write_txn& tx, const std::string& tenant,
                                              const std::vector<std::string>& works) {
  for (std::size_t i = 0; i < works.size(); ++i)
    if (!tx.catalog().get(storage::catalog_kind::work, tenant, works[i]))
      return domain::api_error{domain::error_id::invalid_argument, "The contract names a Work that does not exist.",
                               {{"/work_ids/" + std::to_string(i), "no Work " + works[i] + " in this tenant"}}};
  return std::nullopt;
}

/// The 201 answer of a contract write, as this caller may see it (made inside the write).
domain::api_reply contract_answer(bool commercial, const std::string& id, const std::string& record) {
  auto r = json_reply(201, commercial ? record : domain::without_commercial_terms(record));
  r.headers.emplace_back("Location", "/v0/contracts/" + id);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

/// 403 SCOPE_MISSING for a body that names commercial terms from a caller that may not see them:
/// setting or changing them needs the scope (a writer without it cannot even tell what it would
/// overwrite, so every such body is refused, equal or not).
std::optional<domain::api_reply> commercial_without_scope(const request_context& ctx, const json::object& body) {
  if (!body.contains("commercial_terms") || sees_commercial(ctx)) return std::nullopt;
  return domain::api_reply::failure(domain::error_id::scope_missing,
                                    std::string{"The token does not carry the scope "} + commercial_scope
                                      + ", which setting or changing commercial terms needs.",
                                    {{"/commercial_terms", std::string{"requires "} + commercial_scope}});
}

/// Sends `m` to the writer; after the commit, bumps the rights epoch (cached resolutions used
/// the old contract) and answers what the mutation decided.
void write_contract(const plan_run& run, storage::mutation m, std::shared_ptr<write_outcome> outcome) {
  write_then(run, std::move(m), outcome, "The contract", [run] {
    if (run->actors->rights_epoch) ++*run->actors->rights_epoch;
  });
}

}  // namespace

void plan_create_contract(const plan_run& run) {
  auto parsed_body = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed_body)) return run.answer(std::move(*refusal));
  // The scope before the shape: `commercial_terms: null` from a caller without it is 403, not 400.
  if (auto refusal = commercial_without_scope(*run, std::get<json::object>(parsed_body)))
    return run.answer(std::move(*refusal));
  auto parsed = domain::parse_contract(std::get<json::object>(parsed_body), false);
  if (auto* e = std::get_if<domain::api_error>(&parsed)) return run.answer(domain::api_reply::from(std::move(*e)));
  auto draft = std::make_shared<domain::contract_draft>(std::move(std::get<domain::contract_draft>(parsed)));
  if (!draft->commercial_json.empty())
    if (auto refusal = sensitive_refusal(*run, "write commercial terms"))
      return run.answer(domain::api_reply::from(std::move(*refusal)));
  auto id = domain::random_id("ctr_");
  auto at = domain::iso8601_now();
  auto outcome = std::make_shared<write_outcome>();
  auto record = domain::contract_record_json(*draft, id, 1, at, at, domain::random_id("utk_"));
  auto who = run->who;
  auto commercial = sees_commercial(*run);
  storage::mutation create = [who, id, at, draft, outcome, record, commercial](storage::write_txn& tx) {
    if ((outcome->refusal = missing_work(tx, who.tenant_id, draft->terms.work_ids))) return false;
    tx.contracts().put_version(who.tenant_id, id, 1, draft->terms.status, draft->terms.work_ids, record);
    record_activity(tx, who, "CREATION", "contract", id, {}, {}, at);
    log_change(tx, who.tenant_id, storage::change_op::created, storage::change_kind::contract, id, {"1", {}, {}});
    outcome->reply = contract_answer(commercial, id, record);
    return true;
  };
  write_contract(run, std::move(create), outcome);
}

void plan_create_contract_version(const plan_run& run) {
  auto parsed_body = json_body(run->request);
  if (auto* refusal = std::get_if<domain::api_reply>(&parsed_body)) return run.answer(std::move(*refusal));
  const auto& body = std::get<json::object>(parsed_body);
  if (auto refusal = commercial_without_scope(*run, body)) return run.answer(std::move(*refusal));
  auto parsed = domain::parse_contract(body, true);
  if (auto* e = std::get_if<domain::api_error>(&parsed)) return run.answer(domain::api_reply::from(std::move(*e)));
  auto* token = body.if_contains("update_token");
  if (!token || !token->is_string())
    return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument,
                                                 "A new version needs the update_token of the contract's last read.",
                                                 {{"/update_token", "required: the update_token of your last read"}}));
  auto draft = std::make_shared<domain::contract_draft>(std::move(std::get<domain::contract_draft>(parsed)));
  auto expected = std::string{token->as_string()};
  auto id = run->param("id");
  auto at = domain::iso8601_now();
  auto outcome = std::make_shared<write_outcome>();
  auto who = run->who;
  auto commercial = sees_commercial(*run);
  auto writing_commercial = sensitive_refusal(*run, "write commercial terms");
  storage::mutation next = [who, id, at, draft, expected, outcome, commercial,
                            writing_commercial](storage::write_txn& tx) {
    auto current = tx.contracts().latest(who.tenant_id, id);
    if (!current) {
      outcome->refusal = domain::api_error{domain::error_id::contract_not_found,
                                           "No contract " + id.substr(0, 64) + " exists in this tenant.", {}};
      return false;
    }
    auto old = json::parse(*current).as_object();
    if (old.at("update_token").as_string() != expected) {
      outcome->refusal = domain::api_error{domain::error_id::token_mismatch,
                                           "The contract changed since it was read; read it again and retry.", {}};
      return false;
    }
    // Commercial terms: a caller without the scope carries the previous version's forward
    // unchanged (it could not read them, so it cannot have meant to drop them); a caller with it
    // replaces them, and changing them is a sensitive human-only operation.
    auto terms = *draft;
    auto previous = domain::commercial_terms_of(*current);
    if (!commercial) terms.commercial_json = previous;
    else if (terms.commercial_json != previous && writing_commercial) return outcome->refuse_unstored(*writing_commercial);
    if ((outcome->refusal = missing_work(tx, who.tenant_id, terms.terms.work_ids))) return false;
    auto version = old.at("version").as_int64() + 1;
    auto record = domain::contract_record_json(terms, id, version, std::string{old.at("created").as_string()}, at,
                                               domain::random_id("utk_"));
    tx.contracts().put_version(who.tenant_id, id, version, terms.terms.status, terms.terms.work_ids, record);
    record_activity(tx, who, "UPDATE", "contract", id, {}, {}, at);
    // The version goes in the entry: the change feed fans it out to the Works of this version and the one before.
    log_change(tx, who.tenant_id, storage::change_op::contract_changed, storage::change_kind::contract, id,
               {std::to_string(version), {}, {}});
    outcome->reply = contract_answer(commercial, id, record);
    return true;
  };
  write_contract(run, std::move(next), outcome);
}

void plan_get_contract(const plan_run& run) {
  std::optional<domain::field_mask> mask;
  if (auto fields = query_param(run->request.query, "fields"); !fields.empty()) {
    auto parsed = domain::parse_field_mask(fields, contract_schema());
    if (auto* e = std::get_if<domain::api_error>(&parsed)) return run.answer(domain::api_reply::from(std::move(*e)));
    mask = std::get<domain::field_mask>(parsed);
    // `*` means "everything you may see"; naming commercial terms is asking for them.
    if (mask->names_explicitly("commercial_terms") && !sees_commercial(*run))
      return run.answer(domain::api_reply::failure(
        domain::error_id::scope_missing,
        std::string{"The token does not carry the scope "} + commercial_scope + ", which commercial_terms need.",
        {{"fields", std::string{"commercial_terms requires "} + commercial_scope}}));
  }
  std::int64_t version = 0;
  if (auto v = query_param(run->request.query, "version"); !v.empty()) {
    char* end = nullptr;
    auto n = std::strtoll(v.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || v.size() > 12)
      return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument,
                                                   "version must be a positive integer.",
                                                   {{"version", "a positive integer"}}));
    version = n;
  }
  auto id = run->param("id");
  ask(
    run, run->actors->get<contracts_actor>(), "contracts",
    [run, id, version, mask](fetch_outcome& found) {
      if (!found.found) {
        if (version == 0) return run.answer(not_found(domain::error_id::contract_not_found, "contract", id));
        return run.answer(domain::api_reply::failure(domain::error_id::contract_not_found,
                                                     "The contract has no version " + std::to_string(version) + "."));
      }
      auto body = presented(*run, std::move(found.json));
      if (mask) body = json::serialize(domain::apply_field_mask(json::parse(body).as_object(), *mask));
      auto r = json_reply(200, std::move(body));
      private_for_a_second(r);
      run.answer(std::move(r));
    },
    fetch_atom_v, run->who.tenant_id, id, version);
}

void plan_list_contracts(const plan_run& run) {
  auto status = query_param(run->request.query, "status");
  auto work = query_param(run->request.query, "work_id");
  const auto& statuses = domain::contract_statuses();
  if (!status.empty() && std::find(statuses.begin(), statuses.end(), status) == statuses.end())
    return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument, "Unknown contract status.",
                                                 {{"status", "one of DRAFT, ACTIVE, SUSPENDED, TERMINATED"}}));
  std::vector<std::pair<std::string, std::string>> filters;
  if (!status.empty()) filters.emplace_back("status", status);
  if (!work.empty()) filters.emplace_back("work_id", work);
  storage::contract_query q;
  q.tenant = run->who.tenant_id;
  q.status = status;
  q.work_id = work;
  answer_query(run, "contracts", filters, query_pages(run, run->actors->get<contracts_actor>(), "contracts", q),
               presenter(run.context()));
}

void plan_list_contract_versions(const plan_run& run) {
  auto id = run->param("id");
  // First the contract itself, so a missing one is 404 rather than an empty list.
  ask(
    run, run->actors->get<contracts_actor>(), "contracts",
    [run, id](fetch_outcome& found) {
      if (!found.found) return run.answer(not_found(domain::error_id::contract_not_found, "contract", id));
      storage::contract_versions_query q;
      q.tenant = run->who.tenant_id;
      q.id = id;
      answer_query(run, "versions", {{"contract", id}},
                   query_pages(run, run->actors->get<contracts_actor>(), "contracts", q), presenter(run.context()));
    },
    fetch_atom_v, run->who.tenant_id, id, std::int64_t{0});
}

}  // namespace cl::actors
