#include "domain/contract.hpp"

#include "domain/canonical_json.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <set>

namespace cl::domain {

namespace json = boost::json;

namespace {

api_error invalid(const std::string& field, const std::string& description) {
  return api_error{error_id::invalid_argument, "The contract is invalid: " + field + " " + description + ".",
                   {{field, description}}};
}

bool one_of(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

std::string join(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

/// A string member from `allowed` (or any string of 1..max_len when `allowed` is empty).
std::variant<std::string, api_error> string_member(const json::object& o, const char* name, const std::string& path,
                                                   const std::vector<std::string>& allowed, std::size_t max_len = 500) {
  auto* v = o.if_contains(name);
  if (!v || !v->is_string() || v->as_string().empty() || v->as_string().size() > max_len)
    return invalid(path + "/" + name,
                   allowed.empty() ? "must be a string of 1 to " + std::to_string(max_len) + " characters"
                                   : "must be one of " + join(allowed));
  std::string s{v->as_string()};
  if (!allowed.empty() && !one_of(allowed, s)) return invalid(path + "/" + name, "must be one of " + join(allowed));
  return s;
}

std::optional<api_error> only_members(const json::object& o, const std::string& path,
                                      std::initializer_list<std::string_view> allowed) {
  for (const auto& m : o)
    if (std::find(allowed.begin(), allowed.end(), m.key()) == allowed.end())
      return invalid(path + "/" + std::string{m.key()}.substr(0, 64), "is not a member here");
  return std::nullopt;
}

/// Each item of array member `name` (at most `max` objects) through `each`.
template <class F>
std::optional<api_error> each_object(const json::object& body, const char* name, std::size_t max, F each) {
  auto* v = body.if_contains(name);
  if (!v) return std::nullopt;
  std::string path = std::string{"/"} + name;
  if (!v->is_array() || v->as_array().size() > max)
    return invalid(path, "must be an array of at most " + std::to_string(max) + " objects");
  std::size_t i = 0;
  for (const auto& item : v->as_array()) {
    auto item_path = path + "/" + std::to_string(i++);
    if (!item.is_object()) return invalid(item_path, "must be an object");
    if (auto e = each(item.as_object(), item_path)) return e;
  }
  return std::nullopt;
}

const std::vector<std::string> grant_statuses = {"PERMITTED", "PROHIBITED"};

std::optional<api_error> check_commercial(const json::object& c) {
  static const std::regex amount{R"(^[0-9]{1,12}(\.[0-9]{1,2})?$)"};
  static const std::regex currency{R"(^[A-Z]{3}$)"};
  static const std::vector<std::string> bases = {"LIST_PRICE", "NET_RECEIPTS"};
  static const std::vector<std::string> frequencies = {"MONTHLY", "QUARTERLY", "SEMIANNUAL", "ANNUAL"};
  const std::string root = "/commercial_terms";
  if (auto e = only_members(c, root, {"royalties", "advances", "payment_terms"})) return e;
  if (auto e = each_object(c, "royalties", 50, [&](const json::object& r, const std::string& p) -> std::optional<api_error> {
        auto path = root + p;
        if (auto e = only_members(r, path, {"rate_percent", "manifestation_type", "basis"})) return e;
        auto* rate = r.if_contains("rate_percent");
        if (!rate || !rate->is_number() || rate->to_number<double>() < 0 || rate->to_number<double>() > 100)
          return invalid(path + "/rate_percent", "must be a number from 0 to 100");
        if (r.contains("manifestation_type")) {
          auto m = string_member(r, "manifestation_type", path, manifestation_types());
          if (auto* e = std::get_if<api_error>(&m)) return *e;
        }
        if (r.contains("basis")) {
          auto b = string_member(r, "basis", path, bases);
          if (auto* e = std::get_if<api_error>(&b)) return *e;
        }
        return std::nullopt;
      }))
    return e;
  if (auto e = each_object(c, "advances", 50, [&](const json::object& a, const std::string& p) -> std::optional<api_error> {
        auto path = root + p;
        if (auto e = only_members(a, path, {"amount", "currency", "due"})) return e;
        auto* amt = a.if_contains("amount");
        if (!amt || !amt->is_string() || !std::regex_match(std::string{amt->as_string()}, amount))
          return invalid(path + "/amount", "must be a decimal string such as \"5000.00\"");
        auto* cur = a.if_contains("currency");
        if (!cur || !cur->is_string() || !std::regex_match(std::string{cur->as_string()}, currency))
          return invalid(path + "/currency", "must be an ISO 4217 code such as EUR");
        if (auto* due = a.if_contains("due"); due && (!due->is_string() || !parse_utc(due->as_string())))
          return invalid(path + "/due", "must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ");
        return std::nullopt;
      }))
    return e;
  if (auto* pt = c.if_contains("payment_terms")) {
    auto path = root + "/payment_terms";
    if (!pt->is_object()) return invalid(path, "must be an object");
    const auto& o = pt->as_object();
    if (auto e = only_members(o, path, {"currency", "frequency", "days_after_period"})) return e;
    auto* cur = o.if_contains("currency");
    if (!cur || !cur->is_string() || !std::regex_match(std::string{cur->as_string()}, currency))
      return invalid(path + "/currency", "must be an ISO 4217 code such as EUR");
    auto frequency = string_member(o, "frequency", path, frequencies);
    if (auto* e = std::get_if<api_error>(&frequency)) return *e;
    auto* days = o.if_contains("days_after_period");
    if (days && (!days->is_int64() || days->as_int64() < 0 || days->as_int64() > 365))
      return invalid(path + "/days_after_period", "must be an integer from 0 to 365");
  }
  return std::nullopt;
}

json::array territories_json(const std::vector<contract_view::territory>& ts) {
  json::array out;
  for (const auto& t : ts) {
    json::object o;
    if (t.worldwide) {
      o["worldwide"] = true;
    } else {
      json::array codes;
      for (const auto& c : t.codes) codes.emplace_back(c);
      o["territory_codes"] = std::move(codes);
    }
    o["status"] = t.status;
    out.push_back(std::move(o));
  }
  return out;
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

const std::vector<std::string>& contract_statuses() {
  static const std::vector<std::string> v = {"DRAFT", "ACTIVE", "SUSPENDED", "TERMINATED"};
  return v;
}
const std::vector<std::string>& term_statuses() {
  static const std::vector<std::string> v = {"PERMITTED", "PROHIBITED", "REQUIRED"};
  return v;
}
const std::vector<std::string>& usage_types() {
  static const std::vector<std::string> v = {"ACCESS", "DISPLAY", "DERIVE", "AI_RETRIEVAL", "AI_TRAINING"};
  return v;
}
const std::vector<std::string>& usage_methods() {
  static const std::vector<std::string> v = {"STREAM", "MCP"};
  return v;
}
const std::vector<std::string>& manifestation_types() {
  static const std::vector<std::string> v = {"EBOOK", "AUDIOBOOK", "PRINT", "WEB"};
  return v;
}
const std::vector<std::string>& handling_types() {
  static const std::vector<std::string> v = {"ATTRIBUTION", "COPYRIGHT_NOTICE", "LINK_BACK"};
  return v;
}

std::optional<std::int64_t> parse_utc(std::string_view t) {
  static const std::regex shape{R"(^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$)"};
  std::cmatch m;
  if (!std::regex_match(t.data(), t.data() + t.size(), m, shape)) return std::nullopt;
  auto n = [&](int i) { return std::stoi(m[i].str()); };
  int y = n(1), mo = n(2), d = n(3), h = n(4), mi = n(5), s = n(6);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return std::nullopt;
  static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > month_days[mo - 1] + (mo == 2 && leap ? 1 : 0)) return std::nullopt;
  return days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 + s;
}

std::string format_utc(std::int64_t t) {
  std::int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  std::int64_t secs = t - days * 86400;
  // civil_from_days (H. Hinnant)
  std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  char buf[96];  // room for any 64-bit year the format could print (the compiler checks the worst case)
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", static_cast<long long>(y), m, d,
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  return buf;
}

namespace {

using step = std::optional<api_error>;

/// Unknown members, `title` and `status`.
step parse_heading(const json::object& body, bool new_version, contract_draft& d) {
  for (const auto& m : body) {
    static const std::vector<std::string> members = {"title",          "status",        "valid_from",  "valid_until",
                                                     "work_ids",       "territorial_rights", "manifestation_rights",
                                                     "usage_terms",    "handling_terms", "commercial_terms"};
    bool known = one_of(members, m.key()) || (new_version && m.key() == "update_token");
    if (!known) return invalid("/" + std::string{m.key()}.substr(0, 64), "is not a member of a contract");
  }
  auto title = string_member(body, "title", "", {});
  if (auto* e = std::get_if<api_error>(&title)) return *e;
  d.title = std::get<std::string>(title);
  d.terms.status = "DRAFT";
  if (body.contains("status")) {
    auto status = string_member(body, "status", "", contract_statuses());
    if (auto* e = std::get_if<api_error>(&status)) return *e;
    d.terms.status = std::get<std::string>(status);
  }
  return std::nullopt;
}

/// `valid_from` (required) and `valid_until` (optional, after it).
step parse_validity(const json::object& body, contract_draft& d) {
  auto* from = body.if_contains("valid_from");
  if (!from || !from->is_string() || !parse_utc(from->as_string()))
    return invalid("/valid_from", "must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ");
  d.terms.valid_from = *parse_utc(from->as_string());
  if (auto* until = body.if_contains("valid_until")) {
    if (!until->is_string() || !parse_utc(until->as_string()))
      return invalid("/valid_until", "must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ");
    d.terms.valid_until = *parse_utc(until->as_string());
    if (*d.terms.valid_until <= d.terms.valid_from) return invalid("/valid_until", "must be after valid_from");
  }
  return std::nullopt;
}

/// `work_ids`: 1 to 1000 distinct wk_ ids.
step parse_work_ids(const json::object& body, contract_draft& d) {
  auto* works = body.if_contains("work_ids");
  if (!works || !works->is_array() || works->as_array().empty() || works->as_array().size() > 1000)
    return invalid("/work_ids", "must be an array of 1 to 1000 wk_ ids");
  std::set<std::string> seen;
  for (const auto& w : works->as_array()) {
    if (!w.is_string() || w.as_string().rfind("wk_", 0) != 0 || w.as_string().size() > 64)
      return invalid("/work_ids", "must hold wk_ ids");
    if (!seen.insert(std::string{w.as_string()}).second) return invalid("/work_ids", "must not repeat an id");
    d.terms.work_ids.emplace_back(w.as_string());
  }
  return std::nullopt;
}

/// One `territorial_rights` entry: worldwide, or a set of ISO 3166-1 alpha-2 codes.
step parse_territory(const json::object& t, const std::string& path, contract_draft& d) {
  static const std::regex territory_code{R"(^[A-Z]{2}$)"};
  if (auto e = only_members(t, path, {"worldwide", "territory_codes", "status"})) return e;
  contract_view::territory out;
  auto status = string_member(t, "status", path, grant_statuses);
  if (auto* e = std::get_if<api_error>(&status)) return *e;
  out.status = std::get<std::string>(status);
  auto* ww = t.if_contains("worldwide");
  auto* codes = t.if_contains("territory_codes");
  if ((ww != nullptr) == (codes != nullptr)) return invalid(path, "must have either worldwide: true or territory_codes");
  if (ww) {
    if (!ww->is_bool() || !ww->as_bool()) return invalid(path + "/worldwide", "must be true");
    out.worldwide = true;
  } else {
    if (!codes->is_array() || codes->as_array().empty() || codes->as_array().size() > 250)
      return invalid(path + "/territory_codes", "must be an array of 1 to 250 ISO 3166-1 alpha-2 codes");
    for (const auto& c : codes->as_array()) {
      if (!c.is_string() || !std::regex_match(std::string{c.as_string()}, territory_code))
        return invalid(path + "/territory_codes", "must hold ISO 3166-1 alpha-2 codes such as FR");
      out.codes.emplace_back(c.as_string());
    }
    std::sort(out.codes.begin(), out.codes.end());
    out.codes.erase(std::unique(out.codes.begin(), out.codes.end()), out.codes.end());
  }
  d.terms.territorial_rights.push_back(std::move(out));
  return std::nullopt;
}

/// One `manifestation_rights` entry.
step parse_manifestation(const json::object& t, const std::string& path, contract_draft& d) {
  if (auto e = only_members(t, path, {"manifestation_type", "status"})) return e;
  auto type = string_member(t, "manifestation_type", path, manifestation_types());
  if (auto* e = std::get_if<api_error>(&type)) return *e;
  auto status = string_member(t, "status", path, grant_statuses);
  if (auto* e = std::get_if<api_error>(&status)) return *e;
  d.terms.manifestation_rights.push_back({std::get<std::string>(type), std::get<std::string>(status)});
  return std::nullopt;
}

/// One `usage_terms` entry, with its optional method and exception.
step parse_usage(const json::object& t, const std::string& path, contract_draft& d) {
  if (auto e = only_members(t, path, {"usage_type", "status", "method", "exception"})) return e;
  contract_view::usage u;
  auto type = string_member(t, "usage_type", path, usage_types());
  if (auto* e = std::get_if<api_error>(&type)) return *e;
  u.type = std::get<std::string>(type);
  auto status = string_member(t, "status", path, grant_statuses);
  if (auto* e = std::get_if<api_error>(&status)) return *e;
  u.status = std::get<std::string>(status);
  if (t.contains("method")) {
    auto method = string_member(t, "method", path, usage_methods());
    if (auto* e = std::get_if<api_error>(&method)) return *e;
    u.method = std::get<std::string>(method);
  }
  if (t.contains("exception")) {
    auto ex = string_member(t, "exception", path, {});
    if (auto* e = std::get_if<api_error>(&ex)) return *e;
    u.exception = std::get<std::string>(ex);
  }
  d.terms.usage_terms.push_back(std::move(u));
  return std::nullopt;
}

/// One `handling_terms` entry.
step parse_handling(const json::object& t, const std::string& path, contract_draft& d) {
  if (auto e = only_members(t, path, {"handling_type", "status"})) return e;
  auto type = string_member(t, "handling_type", path, handling_types());
  if (auto* e = std::get_if<api_error>(&type)) return *e;
  auto status = string_member(t, "status", path, term_statuses());
  if (auto* e = std::get_if<api_error>(&status)) return *e;
  d.terms.handling_terms.push_back({std::get<std::string>(type), std::get<std::string>(status)});
  return std::nullopt;
}

/// `commercial_terms`, kept as canonical JSON so "changed" does not depend on member order.
step parse_commercial(const json::object& body, contract_draft& d) {
  if (auto* c = body.if_contains("commercial_terms")) {
    if (!c->is_object()) return invalid("/commercial_terms", "must be an object");
    if (auto e = check_commercial(c->as_object())) return *e;
    d.commercial_json = json::serialize(canonical_json(*c));
  }
  return std::nullopt;
}

}  // namespace

std::variant<contract_draft, api_error> parse_contract(const json::object& body, bool new_version) {
  contract_draft d;
  using entry_parser = step (*)(const json::object&, const std::string&, contract_draft&);
  auto each = [&](const char* member, entry_parser parse) {
    return each_object(body, member, 50,
                       [&](const json::object& t, const std::string& path) { return parse(t, path, d); });
  };
  if (auto e = parse_heading(body, new_version, d)) return *e;
  if (auto e = parse_validity(body, d)) return *e;
  if (auto e = parse_work_ids(body, d)) return *e;
  if (auto e = each("territorial_rights", &parse_territory)) return *e;
  if (auto e = each("manifestation_rights", &parse_manifestation)) return *e;
  if (auto e = each("usage_terms", &parse_usage)) return *e;
  if (auto e = each("handling_terms", &parse_handling)) return *e;
  if (auto e = parse_commercial(body, d)) return *e;
  return d;
}

std::string contract_record_json(const contract_draft& d, const std::string& id, std::int64_t version,
                                 const std::string& created, const std::string& updated,
                                 const std::string& update_token) {
  const auto& t = d.terms;
  json::object o;
  o["id"] = id;
  o["version"] = version;
  o["status"] = t.status;
  o["title"] = d.title;
  o["valid_from"] = format_utc(t.valid_from);
  if (t.valid_until) o["valid_until"] = format_utc(*t.valid_until);
  json::array works;
  for (const auto& w : t.work_ids) works.emplace_back(w);
  o["work_ids"] = std::move(works);
  o["territorial_rights"] = territories_json(t.territorial_rights);
  json::array manifestations;
  for (const auto& m : t.manifestation_rights)
    manifestations.push_back(json::object{{"manifestation_type", m.type}, {"status", m.status}});
  o["manifestation_rights"] = std::move(manifestations);
  json::array usages;
  for (const auto& u : t.usage_terms) {
    json::object uo{{"usage_type", u.type}, {"status", u.status}};
    if (!u.method.empty()) uo["method"] = u.method;
    if (!u.exception.empty()) uo["exception"] = u.exception;
    usages.push_back(std::move(uo));
  }
  o["usage_terms"] = std::move(usages);
  json::array handling;
  for (const auto& h : t.handling_terms) handling.push_back(json::object{{"handling_type", h.type}, {"status", h.status}});
  o["handling_terms"] = std::move(handling);
  if (!d.commercial_json.empty()) o["commercial_terms"] = json::parse(d.commercial_json);
  o["created"] = created;
  o["updated"] = updated;
  o["update_token"] = update_token;
  return json::serialize(o);
}

std::optional<contract_view> contract_view_of(std::string_view record_json) {
  json::error_code ec;
  auto v = json::parse(record_json, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto parsed = parse_contract(
    [&] {
      json::object body;
      for (const auto* name : {"title", "status", "valid_from", "valid_until", "work_ids", "territorial_rights",
                               "manifestation_rights", "usage_terms", "handling_terms"})
        if (auto* m = o.if_contains(name)) body[name] = *m;
      return body;
    }(),
    false);
  auto* d = std::get_if<contract_draft>(&parsed);
  if (!d) return std::nullopt;
  auto view = std::move(d->terms);
  if (auto* id = o.if_contains("id"); id && id->is_string()) view.id = std::string{id->as_string()};
  if (auto* ver = o.if_contains("version"); ver && ver->is_int64()) view.version = ver->as_int64();
  return view;
}

std::string commercial_terms_of(std::string_view record_json) {
  auto v = json::parse(record_json);
  auto* c = v.as_object().if_contains("commercial_terms");
  return c ? json::serialize(canonical_json(*c)) : std::string{};
}

std::string without_commercial_terms(std::string_view record_json) {
  auto v = json::parse(record_json);
  v.as_object().erase("commercial_terms");
  return json::serialize(v);
}

const std::vector<std::string>& contract_fields() {
  static const std::vector<std::string> v = {"id",          "version",        "status",     "title",
                                             "valid_from",  "valid_until",    "work_ids",   "territorial_rights",
                                             "manifestation_rights", "usage_terms", "handling_terms",
                                             "commercial_terms", "created",   "updated",    "update_token"};
  return v;
}

}  // namespace cl::domain
