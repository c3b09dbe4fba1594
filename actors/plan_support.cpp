#include "actors/plan_support.hpp"

#include "domain/clock.hpp"

#include <algorithm>

namespace cl::actors {

domain::api_reply json_reply(int status, std::string body) {
  domain::api_reply r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

domain::api_reply unstorable_reply() {
  return domain::api_reply::failure(domain::error_id::invalid_argument,
                                    "The request is not valid: a value of it cannot be stored as given (U+0000, or not "
                                    "UTF-8).",
                                    {{"request", "holds a value the store cannot keep as given"}});
}

domain::api_reply not_found(domain::error_id missing, const std::string& what, const std::string& id) {
  auto shown = id.size() > 64 ? id.substr(0, 64) + "..." : id;
  return domain::api_reply::failure(missing, "No " + what + " " + shown + " exists in this tenant.");
}

void answer_catalog(const plan_run& run, storage::catalog_kind kind, const std::string& id, domain::error_id missing,
                    const std::string& what) {
  ask(
    run, run->actors->get<reader_actor>(), "record reader",
    [run, id, missing, what](fetch_outcome& found) {
      if (!found.found) return run.answer(not_found(missing, what, id));
      auto r = json_reply(200, std::move(found.json));
      private_for_a_second(r);
      edge_keys(r, run->who, {run->who.tenant_id, id});
      run.answer(std::move(r));
    },
    fetch_atom_v, storage::record_ref{kind, run->who.tenant_id, id});
}

void edge_keys(domain::api_reply& r, const domain::principal& who, const std::vector<std::string>& keys,
               std::int64_t valid_until) {
  if (auto kept = surrogate_control(who, valid_until)) r.headers.push_back(std::move(*kept));
  auto value = edge_key_list(keys);
  r.headers.emplace_back("Surrogate-Key", value);
  r.headers.emplace_back("xkey", value);
}

std::string edge_key_list(const std::vector<std::string>& keys) {
  std::string value;
  for (const auto& k : keys) {
    if (k.empty()) continue;
    if (!value.empty()) value += ' ';
    value += k;
  }
  return value;
}

std::optional<std::pair<std::string, std::string>> surrogate_control(const domain::principal& who,
                                                                     std::int64_t valid_until) {
  // An edge may keep the answer while the token and the rights it shows hold, never longer.
  auto until = who.expires_at > 0 ? std::min(valid_until, who.expires_at) : valid_until;
  auto now = domain::now_seconds();
  if (until <= now) return std::nullopt;
  return std::pair<std::string, std::string>{"Surrogate-Control",
                                             "max-age=" + std::to_string(std::min<std::int64_t>(until - now, 86400))};
}

void private_for_a_second(domain::api_reply& r) { r.headers.emplace_back("Cache-Control", "private, max-age=1"); }

}  // namespace cl::actors
