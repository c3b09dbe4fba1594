#include "domain/mcp.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <string>

namespace cl::domain {

namespace json = boost::json;

bool mcp_version_supported(std::string_view version) { return version == "2025-06-18" || version == "2025-03-26"; }

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// 127.a.b.c in dotted decimal, each part 0-255 without leading zeros.
bool loopback_ipv4(std::string_view host) {
  int parts = 0;
  while (true) {
    auto dot = host.find('.');
    auto part = host.substr(0, dot);
    if (!all_digits(part) || part.size() > 3 || (part.size() > 1 && part[0] == '0') || std::stoi(std::string{part}) > 255)
      return false;
    if (parts == 0 && part != "127") return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    host.remove_prefix(dot + 1);
  }
  return parts == 4;
}

}  // namespace

bool loopback_origin(std::string_view origin) {
  std::string_view rest;
  if (origin.substr(0, 7) == "http://") rest = origin.substr(7);
  else if (origin.substr(0, 8) == "https://") rest = origin.substr(8);
  else return false;
  std::string_view host = rest;
  if (rest.substr(0, 5) == "[::1]") {
    host = rest.substr(0, 5);
    rest.remove_prefix(5);
  } else {
    auto colon = rest.find(':');
    host = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon);
  }
  if (!rest.empty()) {
    auto port = rest.substr(1);
    if (rest[0] != ':' || !all_digits(port) || port.size() > 5 || std::stoi(std::string{port}) > 65535) return false;
  }
  return host == "localhost" || host == "[::1]" || loopback_ipv4(host);
}

mcp_message parse_mcp_message(std::string_view body) {
  mcp_message m;
  json::value parsed;
  try {
    parsed = json::parse(body);
  } catch (const std::exception&) {
    m.error_code = jsonrpc::parse_error;
    m.error_message = "The body is not JSON.";
    return m;
  }
  auto invalid = [&](std::string why) {
    m.error_code = jsonrpc::invalid_request;
    m.error_message = std::move(why);
    return m;
  };
  if (parsed.is_array()) return invalid("Batches are not part of MCP 2025-06-18: send one message per request.");
  auto* o = parsed.if_object();
  if (!o) return invalid("A JSON-RPC message is an object.");
  auto* version = o->if_contains("jsonrpc");
  if (!version || !version->is_string() || version->as_string() != "2.0") return invalid("jsonrpc must be \"2.0\".");
  auto* id = o->if_contains("id");
  if (id && !id->is_string() && !id->is_int64() && !id->is_uint64())
    return invalid("id must be a string or an integer.");
  if (id) m.id = *id;
  auto* method = o->if_contains("method");
  if (!method) {
    // A response to something the server asked; this server asks nothing, but it is accepted (202).
    if (id && (o->contains("result") || o->contains("error"))) {
      m.what = mcp_message::kind::response;
      return m;
    }
    return invalid("A request names its method.");
  }
  if (!method->is_string()) return invalid("method must be a string.");
  m.method = std::string{method->as_string()};
  if (auto* params = o->if_contains("params")) {
    if (!params->is_object()) return invalid("params must be an object.");
    m.params = params->as_object();
  }
  m.what = id ? mcp_message::kind::request : mcp_message::kind::notification;
  return m;
}

std::string jsonrpc_result(const json::value& id, const json::value& result) {
  return jsonrpc_result_text(id, json::serialize(result));
}

std::string jsonrpc_result_text(const json::value& id, std::string_view result) {
  auto shown_id = json::serialize(id);
  std::string out;
  out.reserve(result.size() + shown_id.size() + 32);
  out.append(R"({"jsonrpc":"2.0","id":)").append(shown_id).append(R"(,"result":)").append(result).push_back('}');
  return out;
}

std::string jsonrpc_error(const json::value& id, int code, std::string_view message) {
  return json::serialize(
    json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", message}}}});
}

json::object mcp_initialize_result(std::string_view requested, std::string_view version) {
  return json::object{
    {"protocolVersion", mcp_version_supported(requested) ? requested : mcp_latest_version},
    {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}}},
    {"serverInfo", json::object{{"name", "contentlake"}, {"title", "Content Lake"}, {"version", version}}},
    {"instructions",
     "Licensed content. Every tool call is checked against the contract rights of what it returns for the use "
     "AI_RETRIEVAL by MCP: content those rights do not permit is not returned (the result says why). When a "
     "result carries `attribution`, show it with the content."}};
}

namespace {

json::object error_schema() {
  return json::object{
    {"type", "object"},
    {"description", "Why the call returned no content: the API's error (docs/api.md, Errors)."},
    {"properties", json::object{{"reason", {{"type", "string"}}},
                                {"domain", {{"type", "string"}}},
                                {"code", {{"type", "string"}}},
                                {"status", {{"type", "integer"}}},
                                {"message", {{"type", "string"}}}}},
    {"required", json::array{"reason", "domain", "message"}}};
}

json::array build_tools() {
  json::object string{{"type", "string"}};
  json::array tools;
  tools.push_back(json::object{
    {"name", "search"},
    {"title", "Search licensed content"},
    {"description",
     "Full-text search over the Resources the caller may read. Each hit carries its rights resolved now for "
     "AI_RETRIEVAL by MCP; pass `search_id` (with no query) for the next hits of the same search, never one twice."},
    {"inputSchema",
     json::object{{"type", "object"},
                  {"properties",
                   json::object{{"query", json::object{{"type", "string"}, {"description", "Words, \"phrases\", -excluded."}}},
                                {"search_id", json::object{{"type", "string"}, {"description", "Continue this search."}}},
                                {"page_size", json::object{{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}},
                                {"filter", json::object{{"type", "object"},
                                                        {"description", "As POST /v0/content-lake/search's filter."}}},
                                {"fields", json::object{{"type", "string"},
                                                        {"description", "A field mask over each hit, as the search's "
                                                                        "fields: rights.odrl adds each hit's ODRL policy."}}}}},
                  {"additionalProperties", false}}},
    {"outputSchema",
     json::object{{"type", "object"},
                  {"properties", json::object{{"search_id", string},
                                              {"hits", json::object{{"type", "array"}, {"items", {{"type", "object"}}}}},
                                              {"error", error_schema()}}}}}});
  tools.push_back(json::object{
    {"name", "read_resource"},
    {"title", "Read a Resource"},
    {"description",
     "One Resource with its resolved rights, if they permit AI_RETRIEVAL by MCP: its content as blocks (format "
     "json) or Markdown (format markdown), the attribution to show with it when its rights require one, and "
     "odrl_policy: where the caller's ODRL policy for it is (fields=rights.odrl embeds it)."},
    {"inputSchema",
     json::object{{"type", "object"},
                  {"properties", json::object{{"id", json::object{{"type", "string"}, {"description", "A res_ id."}}},
                                              {"format", json::object{{"type", "string"}, {"enum", json::array{"json", "markdown"}}}},
                                              {"fields", json::object{{"type", "string"},
                                                                      {"description", "A field mask, as ?fields= on the REST read."}}}}},
                  {"required", json::array{"id"}},
                  {"additionalProperties", false}}},
    {"outputSchema",
     json::object{{"type", "object"},
                  {"properties", json::object{{"resource", json::object{{"type", "object"}}},
                                              {"odrl_policy", string},
                                              {"markdown", string},
                                              {"attribution", string},
                                              {"error", error_schema()}}}}}});
  tools.push_back(json::object{
    {"name", "list_works"},
    {"title", "List Works"},
    {"description", "A page of the tenant's Works (their titles and ids), to find what to search or read."},
    {"inputSchema",
     json::object{{"type", "object"},
                  {"properties", json::object{{"page_size", json::object{{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}},
                                              {"page_token", string}}},
                  {"additionalProperties", false}}},
    {"outputSchema",
     json::object{{"type", "object"},
                  {"properties", json::object{{"works", json::object{{"type", "array"}, {"items", {{"type", "object"}}}}},
                                              {"next_page_token", string},
                                              {"error", error_schema()}}}}}});
  return tools;
}

}  // namespace

const json::array& mcp_tools() {
  static const json::array tools = build_tools();
  return tools;
}

bool mcp_tool_exists(std::string_view name) {
  for (const auto& t : mcp_tools())
    if (t.as_object().at("name").as_string() == name) return true;
  return false;
}

json::object mcp_tool_result(json::object structured, std::optional<std::string> text) {
  auto shown = text ? std::move(*text) : json::serialize(structured);
  return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", shown}}}},
                      {"structuredContent", std::move(structured)},
                      {"isError", false}};
}

json::object mcp_tool_error(std::string_view reason, std::string_view domain, std::string_view code, int status,
                            std::string_view message) {
  json::object error{{"reason", reason}, {"domain", domain}, {"code", code}, {"status", status}, {"message", message}};
  return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", std::string{reason} + ": " + std::string{message}}}}},
                      {"structuredContent", json::object{{"error", std::move(error)}}},
                      {"isError", true}};
}

bool attribution_required(const json::object& rights) {
  auto* terms = rights.if_contains("handling_terms");
  if (!terms || !terms->is_array()) return false;
  for (const auto& t : terms->as_array()) {
    auto* o = t.if_object();
    if (!o) continue;
    auto* type = o->if_contains("handling_type");
    auto* status = o->if_contains("status");
    if (type && status && type->is_string() && status->is_string() && type->as_string() == "ATTRIBUTION"
        && status->as_string() == "REQUIRED")
      return true;
  }
  return false;
}

std::string mcp_attribution(const json::object& resource) {
  std::string out;
  if (auto* title = resource.if_contains("title"); title && title->is_string())
    out += "\"" + std::string{title->as_string()} + "\"";
  if (auto* id = resource.if_contains("id"); id && id->is_string())
    out += (out.empty() ? "" : " ") + std::string{"("} + std::string{id->as_string()} + ")";
  std::string contracts;
  if (auto* rights = resource.if_contains("rights"); rights && rights->is_object())
    if (auto* basis = rights->as_object().if_contains("basis"); basis && basis->is_array())
      for (const auto& b : basis->as_array())
        if (auto* c = b.is_object() ? b.as_object().if_contains("contract_id") : nullptr; c && c->is_string())
          contracts += (contracts.empty() ? "" : ", ") + std::string{c->as_string()};
  out += contracts.empty() ? ", from the Content Lake" : ", licensed through the Content Lake under " + contracts;
  return out;
}

}  // namespace cl::domain
