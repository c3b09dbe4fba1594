#include "domain/idempotency.hpp"

#include "domain/canonical_json.hpp"
#include "domain/json_text.hpp"
#include "domain/resource.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace cl::domain {

namespace json = boost::json;

namespace {

std::string sorted_query(std::string_view query) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    auto end = query.find('&', start);
    auto part = query.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!part.empty()) parts.emplace_back(part);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "&") + p;
  return out;
}

}  // namespace

std::optional<std::string> idempotency_key_problem(std::string_view key) {
  if (key.empty()) return std::string{"must not be empty"};
  if (key.size() > 255) return std::string{"at most 255 characters"};
  for (char c : key)
    if (c < 0x21 || c > 0x7e) return std::string{"visible ASCII characters only (no spaces or control characters)"};
  return std::nullopt;
}

std::string request_fingerprint(const api_request& request, std::string_view subject,
                                const std::vector<std::string>& scopes) {
  std::string body_tag;
  json::error_code ec;
  auto parsed = request.body.empty() ? json::value{} : json::parse(request.body, ec);
  body_tag = ec ? sha256_tag(request.body) : sha256_tag(json::serialize(canonical_json(parsed)));
  auto sorted_scopes = scopes;
  std::sort(sorted_scopes.begin(), sorted_scopes.end());
  std::string input = request.method + '\n' + request.path + '\n' + sorted_query(request.query) + '\n' + body_tag + '\n'
                      + std::string{subject} + '\n';
  for (const auto& s : sorted_scopes) input += s + ' ';
  // The declared use decides whether an answer shows content (layer 3): a retry declaring another
  // use is another request. Absent, the input is what it was before the header counted.
  if (request.usage_purpose) input += "\npurpose " + *request.usage_purpose;
  return sha256_tag(input);
}

stored_answer stored_from(const api_reply& reply) {
  stored_answer a;
  a.status = status_of(reply);
  if (reply.error) {
    a.content_type = "application/json";
    a.body = render_error_body(*reply.error);
    a.headers.emplace_back("Cache-Control", "no-store");
  } else {
    a.content_type = reply.content_type;
    a.body = reply.body;
    a.headers = reply.headers;
  }
  if (reply.retry_after_seconds > 0) a.headers.emplace_back("Retry-After", std::to_string(reply.retry_after_seconds));
  return a;
}

api_reply replay_of(const stored_answer& answer) {
  api_reply r;
  r.status = answer.status;
  r.content_type = answer.content_type;
  r.body = answer.body;
  r.headers = answer.headers;
  r.headers.emplace_back(replay_header, "true");
  return r;
}

ledger_lookup look_up(const std::optional<std::string>& stored, std::string_view fingerprint, std::int64_t retention_ms,
                      std::int64_t now_ms) {
  ledger_lookup out;
  if (!stored) return out;
  auto record = parse_ledger_record(*stored);
  if (!record) return out;
  if (record->created_ms + retention_ms <= now_ms) {
    out.expired_ms = record->created_ms;
    return out;
  }
  if (record->fingerprint != fingerprint) {
    out.kind = ledger_lookup::mismatch;
    return out;
  }
  out.kind = ledger_lookup::replay;
  out.answer = std::move(record->answer);
  return out;
}

api_reply key_mismatch_reply() {
  return api_reply::failure(error_id::idempotency_key_mismatch,
                            "This Idempotency-Key was used for a different request (method, path, query, body, caller "
                            "or scopes); use a new key.",
                            {{"Idempotency-Key", "already used for another request"}});
}

std::string ledger_record_json(const ledger_record& r) {
  json::array headers;
  for (const auto& [name, value] : r.answer.headers) headers.push_back(json::array{json::value(name), json::value(value)});
  json::object o{{"fingerprint", r.fingerprint},
                 {"created_ms", r.created_ms},
                 {"status", r.answer.status},
                 {"content_type", r.answer.content_type},
                 {"headers", std::move(headers)},
                 {"body", r.answer.body}};
  return json::serialize(o);
}

std::optional<ledger_record> parse_ledger_record(std::string_view text) {
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  try {
    ledger_record r;
    r.fingerprint = std::string{o.at("fingerprint").as_string()};
    r.created_ms = o.at("created_ms").as_int64();
    r.answer.status = static_cast<int>(o.at("status").as_int64());
    r.answer.content_type = std::string{o.at("content_type").as_string()};
    for (const auto& h : o.at("headers").as_array())
      r.answer.headers.emplace_back(std::string{h.as_array().at(0).as_string()}, std::string{h.as_array().at(1).as_string()});
    r.answer.body = std::string{o.at("body").as_string()};
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace cl::domain
