#include "actors/mcp/mcp_plans.hpp"
#include "actors/fault_hooks.hpp"

#include "actors/plan_body.hpp"
#include "actors/plan_support.hpp"
#include "actors/plans.hpp"
#include "actors/representation_cache.hpp"
#include "actors/search/search_plans.hpp"
#include "domain/content_format.hpp"
#include "domain/errors.hpp"
#include "domain/mcp.hpp"
#include "domain/odrl.hpp"
#include "domain/sigv4.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

namespace cl::actors {

namespace {

namespace json = boost::json;

/// The purpose every tool call declares (docs/rights.md): retrieval for an AI, by MCP.
constexpr const char* mcp_purpose = "AI_RETRIEVAL; method=MCP";

domain::api_reply jsonrpc_reply(int status, std::string body) {
  domain::api_reply r;
  r.status = status;
  r.body = std::move(body);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

/// The REST request a tool call makes: the MCP request's caller, deadline and limits, another
/// route, the purpose fixed.
std::shared_ptr<request_context> tool_request(const request_context& mcp, std::string method, std::string path,
                                              std::string query, std::string body) {
  auto sub = std::make_shared<request_context>(mcp);
  auto& r = sub->request;
  r.method = std::move(method);
  r.path = std::move(path);
  r.query = std::move(query);
  r.body = std::move(body);
  r.content_type = r.body.empty() ? "" : "application/json";
  r.accept = "application/json";
  r.if_none_match.clear();
  r.usage_purpose = std::string{mcp_purpose};
  r.idempotency_key.clear();
  r.has_idempotency_key = false;
  sub->idempotency = nullptr;
  sub->params.clear();
  return sub;
}

/// A tool's answer from the REST plan's: its JSON object, or the API's error as a failed tool result.
using shape_fn = std::function<json::object(json::object answer)>;

/// Where a tool's result is kept (actors/representation_cache.hpp), found again only when the REST
/// answer it was shaped from is byte for byte the same; no cache: shaped every time.
struct kept_result {
  representation_cache* cache = nullptr;
  std::string key;
};

/// The rights headers of a REST answer about one Resource, which the tool's HTTP answer carries too.
std::vector<std::pair<std::string, std::string>> travelling(const domain::api_reply& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& h : r.headers)
    if (domain::is_rights_header(h.first)) out.push_back(h);
  return out;
}

reply_fn tool_answer(const plan_run& run, const json::value& id, shape_fn shape, kept_result kept = {}) {
  return [reply =
            [run](domain::api_reply reply, const domain::api_reply& from) {
              for (auto& h : travelling(from)) reply.headers.push_back(std::move(h));
              run.answer(std::move(reply));
            },
          id, shape = std::move(shape), kept = std::move(kept)](domain::api_reply r) {
    auto answer = [&](const json::object& result) { reply(jsonrpc_reply(200, domain::jsonrpc_result(id, result)), r); };
    if (r.error) {
      const auto& e = domain::entry(r.error->id);
      return answer(domain::mcp_tool_error(e.reason, e.domain, e.code, e.http_status, r.error->message));
    }
    if (r.status != 200 || r.next_chunk || r.next_chunk_async)
      return answer(domain::mcp_tool_error("INTERNAL", domain::contentlake_domain, "INTERNAL", 500,
                                           "The read answered in a form the tool does not carry."));
    representation_cache::inputs from{r.body, {}, {}};
    if (kept.cache) {
      if (auto made = kept.cache->find(kept.key, from))
        return reply(jsonrpc_reply(200, domain::jsonrpc_result_text(id, made->body)), r);
    }
    json::object result;
    try {
      result = shape(json::parse(r.body).as_object());
    } catch (const std::exception&) {
      return answer(domain::mcp_tool_error("INTERNAL", domain::contentlake_domain, "INTERNAL", 500, "The answer was not JSON."));
    }
    auto made = std::make_shared<representation_cache::rendering>();
    made->body = json::serialize(result);
    if (kept.cache) kept.cache->insert(kept.key, from, made);
    reply(jsonrpc_reply(200, domain::jsonrpc_result_text(id, made->body)), r);
  };
}

/// `arguments[name]` as a string, "" when absent; false when present and not a string.
bool string_arg(const json::object& args, const char* name, std::string& out) {
  auto* v = args.if_contains(name);
  if (!v) return true;
  if (!v->is_string()) return false;
  out = std::string{v->as_string()};
  return true;
}

bool int_arg(const json::object& args, const char* name, std::int64_t lo, std::int64_t hi, std::optional<std::int64_t>& out) {
  auto* v = args.if_contains(name);
  if (!v) return true;
  if (!v->is_int64() && !v->is_uint64()) return false;
  auto n = v->is_int64() ? v->as_int64() : static_cast<std::int64_t>(v->as_uint64());
  if (n < lo || n > hi) return false;
  out = n;
  return true;
}

/// Runs tool `name` with `args` for the caller of `run`, and answers it.
void call_tool(const plan_run& run, const json::value& id, const std::string& name, const json::object& args) {
  auto invalid = [&](const std::string& why) {
    run.answer(jsonrpc_reply(200, domain::jsonrpc_error(id, domain::jsonrpc::invalid_params, why)));
  };
  auto only = [&](std::initializer_list<const char*> names) -> std::optional<std::string> {
    for (const auto& [key, value] : args) {
      bool known = false;
      for (auto* n : names) known = known || key == n;
      if (!known) return std::string{key};
    }
    return std::nullopt;
  };
  if (name == "read_resource") {
    if (auto unknown = only({"id", "format", "fields"})) return invalid("read_resource has no argument " + unknown->substr(0, 64));
    std::string rid, format = "json", fields;
    if (!string_arg(args, "id", rid) || rid.empty()) return invalid("read_resource needs id, a res_ id");
    if (!string_arg(args, "format", format) || (format != "json" && format != "markdown"))
      return invalid("format must be json or markdown");
    if (!string_arg(args, "fields", fields)) return invalid("fields must be a string (a field mask)");
    auto sub = tool_request(*run, "GET", "/v0/content-lake/resources/" + rid,
                            fields.empty() ? "" : "fields=" + domain::sigv4::uri_encode(fields, false), "");
    sub->params = {{"id", rid}};
    bool markdown = format == "markdown";
    // The result depends on nothing but the REST answer it is shaped from, so it is kept beside it.
    kept_result kept;
    if (auto* cache = run->actors->representations.get())
      kept = {cache, representation_cache::key(run->who.tenant_id, rid, "mcp-" + format + '?' + fields)};
    return plan_get_resource(plan_run{run.self(), sub,
                                      tool_answer(
                                        run, id,
                                        [markdown, rid](json::object resource) {
                                          json::object out;
                                          out["odrl_policy"] = domain::odrl_policy_path(rid);
                                          std::optional<std::string> text;
                                          if (markdown && resource.contains("content")) {
                                            auto md = domain::render_markdown(resource.at("content"));
                                            out["markdown"] = md;
                                            text = md;
                                          }
                                          auto* rights = resource.if_contains("rights");
                                          if (rights && rights->is_object()
                                              && domain::attribution_required(rights->as_object())) {
                                            auto attribution = domain::mcp_attribution(resource);
                                            out["attribution"] = attribution;
                                            if (text) *text += "\n\n---\nAttribution: " + attribution;
                                          }
                                          out["resource"] = std::move(resource);
                                          if (!text) {
                                            text = json::serialize(out);
                                          }
                                          return domain::mcp_tool_result(std::move(out), std::move(text));
                                        },
                                        std::move(kept))});
  }
  if (name == "search") {
    if (auto unknown = only({"query", "search_id", "page_size", "filter", "fields"}))
      return invalid("search has no argument " + unknown->substr(0, 64));
    json::object body;
    std::string query, search_id;
    std::optional<std::int64_t> page_size;
    if (!string_arg(args, "query", query)) return invalid("query must be a string");
    if (!string_arg(args, "search_id", search_id)) return invalid("search_id must be a string");
    if (!int_arg(args, "page_size", 1, 100, page_size)) return invalid("page_size must be an integer from 1 to 100");
    if (query.empty() == search_id.empty()) return invalid("give either query (a new search) or search_id (its next hits)");
    if (!query.empty()) body["query"] = query;
    if (!search_id.empty()) body["search_id"] = search_id;
    if (page_size) body["page_size"] = *page_size;
    if (auto* filter = args.if_contains("filter")) {
      if (!filter->is_object()) return invalid("filter must be an object");
      body["filter"] = *filter;
    }
    if (auto* fields = args.if_contains("fields")) {
      if (!fields->is_string()) return invalid("fields must be a string (a field mask over each hit)");
      body["fields"] = *fields;
    }
    auto sub = tool_request(*run, "POST", "/v0/content-lake/search", "", json::serialize(body));
    return plan_search(plan_run{run.self(), sub, tool_answer(run, id, [](json::object answer) {
                                  return domain::mcp_tool_result(std::move(answer));
                                })});
  }
  if (name == "list_works") {
    if (auto unknown = only({"page_size", "page_token"})) return invalid("list_works has no argument " + unknown->substr(0, 64));
    std::optional<std::int64_t> page_size;
    std::string token;
    if (!int_arg(args, "page_size", 1, 100, page_size)) return invalid("page_size must be an integer from 1 to 100");
    if (!string_arg(args, "page_token", token)) return invalid("page_token must be a string");
    std::string query;
    if (page_size) query = "page_size=" + std::to_string(*page_size);
    if (!token.empty()) query += (query.empty() ? "" : "&") + std::string{"page_token="} + domain::sigv4::uri_encode(token, false);
    auto sub = tool_request(*run, "GET", "/v0/content-lake/works", query, "");
    return plan_list_works(plan_run{run.self(), sub, tool_answer(run, id, [](json::object answer) {
                                      return domain::mcp_tool_result(std::move(answer));
                                    })});
  }
  invalid("Unknown tool: " + name.substr(0, 64));
}

void answer(const plan_run& run, const mcp_policy& policy) {
  const auto& req = run->request;
  // DNS rebinding: a browser page may reach a local endpoint; only the Origins configured may, and
  // pages of this machine (a rebinding page's Origin carries the attacker's name, never a loopback one).
  if (!req.origin.empty() && !domain::loopback_origin(req.origin)
      && std::find(policy.allowed_origins.begin(), policy.allowed_origins.end(), req.origin) == policy.allowed_origins.end())
    return run.answer(domain::api_reply::failure(domain::error_id::origin_not_allowed,
                                                 "Requests from this Origin may not use the MCP endpoint.",
                                                 {{"Origin", "not in mcp.allowed_origins"}}));
  if (!req.mcp_protocol_version.empty() && !domain::mcp_version_supported(req.mcp_protocol_version))
    return run.answer(domain::api_reply::failure(domain::error_id::mcp_protocol_version_unsupported,
                                                 "This MCP endpoint speaks 2025-06-18 and 2025-03-26.",
                                                 {{"MCP-Protocol-Version", "2025-06-18 or 2025-03-26"}}));
  if (auto refusal = refuse_unless_json_body(req)) return run.answer(std::move(*refusal));
  auto message = domain::parse_mcp_message(req.body);
  using kind = domain::mcp_message::kind;
  if (message.what == kind::invalid)
    return run.answer(jsonrpc_reply(400, domain::jsonrpc_error(message.id, message.error_code, message.error_message)));
  if (message.what != kind::request) {
    // Notifications (notifications/initialized, cancellations) and responses: accepted, nothing to answer.
    domain::api_reply accepted;
    accepted.status = 202;
    accepted.content_type.clear();
    return run.answer(std::move(accepted));
  }
  const auto& id = message.id;
  const auto& method = message.method;
  if (method == "initialize") {
    std::string requested;
    if (auto* v = message.params.if_contains("protocolVersion"); v && v->is_string()) requested = std::string{v->as_string()};
    return run.answer(
      jsonrpc_reply(200, domain::jsonrpc_result(id, domain::mcp_initialize_result(requested, policy.server_version))));
  }
  if (method == "ping") return run.answer(jsonrpc_reply(200, domain::jsonrpc_result(id, json::object{})));
  if (method == "tools/list")
    return run.answer(jsonrpc_reply(200, domain::jsonrpc_result(id, json::object{{"tools", domain::mcp_tools()}})));
  if (method == "tools/call") {
    auto* name = message.params.if_contains("name");
    if (!name || !name->is_string())
      return run.answer(
        jsonrpc_reply(200, domain::jsonrpc_error(id, domain::jsonrpc::invalid_params, "tools/call names its tool")));
    json::object args;
    if (auto* a = message.params.if_contains("arguments")) {
      if (!a->is_object())
        return run.answer(jsonrpc_reply(
          200, domain::jsonrpc_error(id, domain::jsonrpc::invalid_params, "arguments must be an object")));
      args = a->as_object();
    }
    return call_tool(run, id, std::string{name->as_string()}, args);
  }
  run.answer(jsonrpc_reply(
    200, domain::jsonrpc_error(id, domain::jsonrpc::method_not_found, "Method not found: " + method.substr(0, 64))));
}

}  // namespace

void plan_mcp(const plan_run& run) {
  ask(
    run, run->actors->get<mcp_actor>(), "mcp",
    [run](std::shared_ptr<const mcp_policy> policy) { answer(run, *policy); }, mcp_policy_atom_v);
}

mcp_actor::behavior_type mcp_holder(mcp_actor::pointer self, std::shared_ptr<const mcp_policy> policy) {
  accept_fault_delays(self);
  return {
    [policy](mcp_policy_atom) { return policy; },
  };
}

}  // namespace cl::actors
