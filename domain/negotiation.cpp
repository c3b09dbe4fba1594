#include "domain/negotiation.hpp"

#include <array>
#include <cctype>
#include <cstdlib>
#include <string>

namespace cl::domain {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// How specifically `range` matches `type` (3 exact, 2 type/*, 1 */*, 0 no match).
int specificity(const std::string& range, std::string_view type) {
  if (range == type) return 3;
  if (range == "*/*") return 1;
  auto slash = type.find('/');
  if (range.size() > 2 && range.substr(range.size() - 2) == "/*" && range.substr(0, range.size() - 1) == type.substr(0, slash + 1))
    return 2;
  return 0;
}

}  // namespace

double quality_of(std::string_view accept, std::string_view type) {
  if (trim(accept).empty()) return 1.0;
  double quality = -1;
  int best = 0;
  std::size_t start = 0;
  while (start <= accept.size()) {
    auto end = accept.find(',', start);
    auto item = accept.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    auto semi = item.find(';');
    auto range = lower(trim(item.substr(0, semi)));
    double q = 1.0;
    while (semi != std::string_view::npos) {
      auto next = item.find(';', semi + 1);
      auto param = trim(item.substr(semi + 1, next == std::string_view::npos ? std::string_view::npos : next - semi - 1));
      if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=')
        q = std::strtod(std::string{param.substr(2)}.c_str(), nullptr);
      semi = next;
    }
    int s = specificity(range, type);
    if (s > best) {  // the most specific range decides a type's quality (RFC 9110 12.5.1)
      best = s;
      quality = q;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return quality;
}

std::optional<api_error> refuse_unless(std::string_view accept, std::string_view type) {
  if (quality_of(accept, type) > 0) return std::nullopt;
  std::string t{type};
  return api_error{error_id::not_acceptable, "This operation answers " + t + " only; the Accept header excludes it.",
                   {{"Accept", "include " + t + " (or */*)"}}};
}

std::optional<api_error> refuse_unless_json(std::string_view accept) { return refuse_unless(accept, "application/json"); }

std::string_view media_type(rendering r) {
  switch (r) {
    case rendering::ndjson: return "application/x-ndjson";
    case rendering::markdown: return "text/markdown";
    default: return "application/json";
  }
}

std::variant<rendering, api_error> negotiate(std::string_view format, std::string_view accept) {
  if (!format.empty()) {
    if (format == "json") return rendering::json;
    if (format == "ndjson") return rendering::ndjson;
    if (format == "markdown") return rendering::markdown;
    return api_error{error_id::invalid_argument, "format must be json, ndjson or markdown.",
                     {{"format", "one of json, ndjson, markdown"}}};
  }
  if (trim(accept).empty()) return rendering::json;
  constexpr std::array<rendering, 3> offered = {rendering::json, rendering::ndjson, rendering::markdown};
  std::array<double, 3> quality{};
  for (std::size_t i = 0; i < offered.size(); ++i) quality[i] = quality_of(accept, media_type(offered[i]));
  std::size_t chosen = offered.size();
  for (std::size_t i = 0; i < offered.size(); ++i)
    if (quality[i] > 0 && (chosen == offered.size() || quality[i] > quality[chosen])) chosen = i;
  if (chosen == offered.size())
    return api_error{error_id::not_acceptable,
                     "A Resource can be read as application/json, application/x-ndjson or text/markdown.",
                     {{"Accept", "offer one of application/json, application/x-ndjson, text/markdown"}}};
  return offered[chosen];
}

}  // namespace cl::domain
