#include "actors/plan_body.hpp"

#include "domain/query.hpp"
#include "domain/text.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace cl::actors {

std::optional<std::int64_t> positive(std::string_view text) {
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || p != text.data() + text.size() || n < 1) return std::nullopt;
  return n;
}

namespace json = boost::json;

namespace {

/// The JSON Pointer of the first member name or string under `v` (at `path`) that is not text the
/// API takes (domain/text.hpp), and why; nullopt when there is none.
std::optional<domain::error_detail> unusable_text(const json::value& v, const std::string& path) {
  auto problem = [](const json::string& s) { return domain::text_problem({s.data(), s.size()}); };
  if (v.is_string()) {
    if (auto why = problem(v.as_string())) return domain::error_detail{path.empty() ? "/" : path, std::string{*why}};
  } else if (v.is_array()) {
    std::size_t i = 0;
    for (const auto& item : v.as_array())
      if (auto at = unusable_text(item, path + "/" + std::to_string(i++))) return at;
  } else if (v.is_object()) {
    for (const auto& member : v.as_object()) {
      // A name is shown cut, and without what makes it unusable.
      std::string name{member.key().substr(0, member.key().find('\0')).substr(0, 64)};
      if (auto why = problem(member.key())) return domain::error_detail{path + "/" + name, "a member name " + std::string{*why}};
      if (path.empty() && member.key() == "content") continue;  // the content format's own rule: PCF005
      if (auto at = unusable_text(member.value(), path + "/" + name)) return at;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<domain::api_reply> refuse_unless_json_body(const domain::api_request& request) {
  auto type = std::string_view{request.content_type}.substr(0, request.content_type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  auto is = [&](std::string_view name) {
    return type.size() == name.size()
           && std::equal(type.begin(), type.end(), name.begin(),
                         [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  };
  if (is("application/json") || is("application/merge-patch+json")) return std::nullopt;
  return domain::api_reply::failure(domain::error_id::unsupported_media_type, "Send the body as application/json.",
                                    {{"Content-Type", "must be application/json (or application/merge-patch+json)"}});
}

std::variant<json::object, domain::api_reply> json_body(const domain::api_request& request) {
  if (auto refusal = refuse_unless_json_body(request)) return std::move(*refusal);
  boost::system::error_code ec;
  auto value = json::parse(request.body, ec);
  if (ec || !value.is_object())
    return domain::api_reply::failure(domain::error_id::invalid_argument, "The body is not a JSON object.",
                                      {{"body", ec ? "not valid JSON (UTF-8)" : "must be a JSON object"}});
  // What no store could keep as it came (U+0000 ends PostgreSQL's text) is refused here, the same
  // on every backend, naming where it is; content text has the content format's rule (PCF005).
  // JSON writes U+0000 only as the escape \u0000 (the parser took the bytes as UTF-8): a body
  // without one is walked no further, so ordinary writes pay one scan of their text.
  if (request.body.find("\\u0000") != std::string::npos) {
    if (auto at = unusable_text(value, ""))
      return domain::api_reply::failure(domain::error_id::invalid_argument,
                                        "The request is not valid: " + at->field + " " + at->description + ".", {*at});
  }
  return std::move(value.as_object());
}

std::optional<domain::api_reply> unknown_members(const json::object& body, std::initializer_list<std::string_view> allowed) {
  std::vector<domain::error_detail> details;
  for (const auto& member : body) {
    std::string_view key{member.key().data(), member.key().size()};
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      details.push_back({"/" + std::string{key}.substr(0, 64), "unknown member"});
  }
  if (details.empty()) return std::nullopt;
  return domain::api_reply::failure(domain::error_id::invalid_argument, "The body has members this operation does not know.",
                                    std::move(details));
}

std::optional<domain::api_reply> refuse_body(const domain::api_request& request) {
  if (request.body.empty()) return std::nullopt;
  return invalid_field("body", "must be empty: this route takes no request body");
}

domain::api_reply invalid_field(const std::string& field, const std::string& why) {
  return domain::api_reply::failure(domain::error_id::invalid_argument,
                                    "The request is not valid: " + field + " " + why + ".", {{field, why}});
}

std::string query_param(std::string_view query, std::string_view name) {
  std::size_t start = 0;
  while (start <= query.size()) {
    auto end = query.find('&', start);
    auto pair = query.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    auto eq = pair.find('=');
    if (domain::decode_query_component(pair.substr(0, eq)) == name)  // names are read decoded, as caches do
      return domain::decode_query_component(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return {};
}

}  // namespace cl::actors
