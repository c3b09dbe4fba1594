#include "domain/resource.hpp"

#include "domain/base64url.hpp"

#include "domain/content_format.hpp"
#include "domain/json_text.hpp"
#include "domain/sha256.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <regex>

namespace cl::domain {

namespace json = boost::json;

namespace {

api_error invalid(const std::string& field, const std::string& description) {
  return api_error{error_id::invalid_argument, "The Resource is invalid: " + field + " " + description + ".",
                   {{field, description}}};
}

bool one_of(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

std::optional<api_error> string_list(const json::object& body, const char* name, std::vector<std::string>& out,
                                     std::string_view prefix) {
  auto* v = body.if_contains(name);
  if (!v) return std::nullopt;
  std::string field = std::string{"/"} + name;
  if (!v->is_array() || v->as_array().size() > 32) return invalid(field, "must be an array of at most 32 strings");
  for (const auto& item : v->as_array()) {
    if (!item.is_string() || item.as_string().empty() || item.as_string().size() > 200)
      return invalid(field, "must hold non-empty strings");
    std::string s{item.as_string()};
    if (!prefix.empty() && s.rfind(prefix, 0) != 0) return invalid(field, "must hold " + std::string{prefix} + " ids");
    out.push_back(std::move(s));
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& resource_types() {
  static const std::vector<std::string> types = {"DOCUMENT", "ARTICLE", "CHAPTER", "IMAGE", "AUDIO", "VIDEO", "DATASET"};
  return types;
}

const std::vector<std::string>& source_origin_types() {
  static const std::vector<std::string> types = {"UPLOAD", "IMPORT", "FEED", "API"};
  return types;
}

std::variant<resource_draft, api_error> parse_resource_create(const json::object& body) {
  static const std::vector<std::string_view> allowed = {"title", "type",      "language", "content",  "work_id",
                                                        "source", "source_id", "agents",   "tooling",  "activity_type"};
  for (const auto& m : body)
    if (std::find(allowed.begin(), allowed.end(), std::string_view{m.key().data(), m.key().size()}) == allowed.end())
      return invalid("/" + std::string{m.key()}.substr(0, 64), "is not a member of a Resource create request");
  resource_draft d;
  auto* title = body.if_contains("title");
  if (!title || !title->is_string() || title->as_string().empty() || title->as_string().size() > 1000)
    return invalid("/title", "must be a string of 1 to 1000 characters");
  d.title = std::string{title->as_string()};
  auto* type = body.if_contains("type");
  if (!type || !type->is_string() || !one_of(resource_types(), std::string_view{type->as_string()}))
    return invalid("/type", "must be one of DOCUMENT, ARTICLE, CHAPTER, IMAGE, AUDIO, VIDEO, DATASET");
  d.type = std::string{type->as_string()};
  static const std::regex language_tag{"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"};
  auto* language = body.if_contains("language");
  if (!language || !language->is_string() || language->as_string().size() > 35
      || !std::regex_match(std::string{language->as_string()}, language_tag))
    return invalid("/language", "must be a BCP 47 language tag such as en or pt-BR");
  d.language = std::string{language->as_string()};
  auto* content = body.if_contains("content");
  if (!content) return invalid("/content", "is required (a cl.content/1 document)");
  if (auto v = validate_content(*content, "/content")) return to_api_error(*v);
  d.content_json = json::serialize(*content);
  if (auto* work = body.if_contains("work_id")) {
    if (!work->is_string() || work->as_string().size() < 4 || std::string_view{work->as_string()}.substr(0, 3) != "wk_")
      return invalid("/work_id", "must be a wk_ id");
    d.work_id = std::string{work->as_string()};
  }
  if (body.contains("source") && body.contains("source_id"))
    return invalid("/source_id", "cannot be combined with /source");
  if (auto* sid = body.if_contains("source_id")) {
    if (!sid->is_string() || std::string_view{sid->as_string()}.substr(0, 4) != "src_")
      return invalid("/source_id", "must be a src_ id");
    d.source_id = std::string{sid->as_string()};
  }
  if (auto* src = body.if_contains("source")) {
    if (!src->is_object()) return invalid("/source", "must be an object with name, origin_type and system");
    const auto& o = src->as_object();
    for (const auto& m : o)
      if (m.key() != "name" && m.key() != "origin_type" && m.key() != "system")
        return invalid("/source/" + std::string{m.key()}.substr(0, 64), "is not a member of a Source");
    resource_draft::new_source s;
    auto text = [&](const char* name, std::string& out) -> std::optional<api_error> {
      auto* v = o.if_contains(name);
      if (!v || !v->is_string() || v->as_string().empty() || v->as_string().size() > 200)
        return invalid(std::string{"/source/"} + name, "must be a string of 1 to 200 characters");
      out = std::string{v->as_string()};
      return std::nullopt;
    };
    if (auto e = text("name", s.name)) return *e;
    if (auto e = text("origin_type", s.origin_type)) return *e;
    if (!one_of(source_origin_types(), s.origin_type))
      return invalid("/source/origin_type", "must be one of UPLOAD, IMPORT, FEED, API");
    if (auto e = text("system", s.system)) return *e;
    d.source = std::move(s);
  }
  if (auto e = string_list(body, "agents", d.agents, "agt_")) return *e;
  if (auto e = string_list(body, "tooling", d.tooling, "")) return *e;
  if (auto* at = body.if_contains("activity_type")) {
    if (!at->is_string() || (at->as_string() != "CREATION" && at->as_string() != "ADAPTATION"))
      return invalid("/activity_type", "must be CREATION or ADAPTATION");
    d.activity_type = std::string{at->as_string()};
  }
  return d;
}

json::value merge_patch(json::value target, const json::value& patch) {
  if (!patch.is_object()) return patch;
  if (!target.is_object()) target = json::object{};
  auto& out = target.as_object();
  for (const auto& [key, value] : patch.as_object()) {
    if (value.is_null()) {
      out.erase(key);
    } else {
      auto* existing = out.if_contains(key);
      out[key] = merge_patch(existing ? *existing : json::value{}, value);
    }
  }
  return target;
}

namespace {

/// Takes `update_token` out of `body` (required), leaving the rest for create-style validation.
std::variant<std::string, api_error> take_update_token(json::object& body) {
  auto* token = body.if_contains("update_token");
  if (!token || !token->is_string() || token->as_string().empty())
    return invalid("/update_token", "is required: pass the update_token of your last read");
  std::string t{token->as_string()};
  body.erase("update_token");
  return t;
}

std::optional<api_error> refuse_members(const json::object& body, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (body.contains(n)) return invalid(std::string{"/"} + n, "cannot be changed by this operation");
  return std::nullopt;
}

}  // namespace

std::variant<resource_change, api_error> parse_resource_replace(const json::object& input) {
  auto body = input;
  auto token = take_update_token(body);
  if (auto* e = std::get_if<api_error>(&token)) return *e;
  if (auto e = refuse_members(body, {"work_id", "source", "source_id", "activity_type"})) return *e;
  auto draft = parse_resource_create(body);
  if (auto* e = std::get_if<api_error>(&draft)) return *e;
  return resource_change{std::move(std::get<resource_draft>(draft)), std::get<std::string>(token)};
}

std::variant<resource_change, api_error> parse_resource_patch(const json::object& input, const json::object& current) {
  auto body = input;
  auto token = take_update_token(body);
  if (auto* e = std::get_if<api_error>(&token)) return *e;
  if (auto e = refuse_members(body, {"work_id", "source", "source_id", "activity_type"})) return *e;
  json::object state;
  for (const char* name : {"title", "type", "language", "content"})
    if (auto* v = current.if_contains(name)) state[name] = *v;
  json::object patch;
  for (const auto& [key, value] : body)
    if (key != "agents" && key != "tooling") patch[key] = value;
  auto merged = merge_patch(state, patch).as_object();
  for (const char* name : {"agents", "tooling"})
    if (auto* v = body.if_contains(name)) merged[name] = *v;
  auto draft = parse_resource_create(merged);
  if (auto* e = std::get_if<api_error>(&draft)) return *e;
  return resource_change{std::move(std::get<resource_draft>(draft)), std::get<std::string>(token)};
}

std::string resource_record_json(const resource_draft& d, const resource_identity& ids, const std::string& update_token) {
  std::string out = "{\"id\":" + json_string(ids.id);
  if (d.work_id) out += ",\"work_id\":" + json_string(*d.work_id);
  out += ",\"version\":" + json_string(ids.version);
  out += ",\"title\":" + json_string(d.title);
  out += ",\"uri\":" + json_string("cl://" + ids.tenant + "/" + d.type + "/" + ids.id + "/" + ids.version);
  out += ",\"type\":" + json_string(d.type);
  out += ",\"language\":" + json_string(d.language);
  if (ids.source_id) out += ",\"source_id\":" + json_string(*ids.source_id);
  out += ",\"content\":" + d.content_json;
  out += ",\"hash_content\":" + json_string(sha256_tag(d.content_json));
  out += ",\"update_token\":" + json_string(update_token);
  out += ",\"created\":" + json_string(ids.created);
  out += ",\"updated\":" + json_string(ids.updated);
  out += "}";
  return out;
}

std::string promoted_record_json(std::string_view record_json, const std::string& work_id, const std::string& updated,
                                 const std::string& update_token) {
  auto old = json::parse(record_json).as_object();
  json::object out;
  for (auto& [key, value] : old) {
    out[key] = value;
    if (key == "id") out["work_id"] = work_id;  // canonical order: right after the id
  }
  out["updated"] = updated;
  out["update_token"] = update_token;
  return json::serialize(out);
}

std::string sha256_tag(std::string_view bytes) {
  auto digest = sha256(bytes);
  return "sha256:" + hex_encode(std::string_view{reinterpret_cast<const char*>(digest.data()), digest.size()});
}

std::string resource_hash(std::string_view record_json, std::string_view rights_digest_input) {
  std::string both;
  both.reserve(record_json.size() + 1 + rights_digest_input.size());
  both.append(record_json).push_back('\n');
  both.append(rights_digest_input);
  return sha256_tag(both);
}

std::string compose_resource(std::string_view record_json, std::string_view rights_json, std::string_view hash) {
  std::string out;
  out.reserve(record_json.size() + rights_json.size() + hash.size() + 24);
  out.append(record_json.substr(0, record_json.size() - 1));
  out += ",\"rights\":";
  out.append(rights_json);
  out += ",\"hash\":";
  append_json_string(out, hash);
  out.push_back('}');
  return out;
}

bool if_none_match_hits(std::string_view header, std::string_view hash) {
  std::size_t start = 0;
  while (start < header.size()) {
    auto end = header.find(',', start);
    auto item = header.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item == "*") return true;
    if (item.substr(0, 2) == "W/") item.remove_prefix(2);  // weak comparison, RFC 9110 13.1.2
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"' && item.substr(1, item.size() - 2) == hash)
      return true;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return false;
}

}  // namespace cl::domain
