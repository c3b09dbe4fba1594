#include "http/router.hpp"

#include "domain/query.hpp"

namespace cl::http {

namespace {

/// Splits "/a/b/c" into {"a","b","c"}; a trailing slash yields an empty last segment.
std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path.front() != '/') return out;
  std::size_t start = 1;
  while (true) {
    auto slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

bool names_parameter(std::string_view t) { return t.size() > 2 && t.front() == '{' && t.back() == '}'; }

/// Matches one template's segments against the path's (as many); fills `params` on success.
/// Compares in place and decodes parameters only for a match.
bool match_template(const std::vector<std::string_view>& tmpl, const std::vector<std::string_view>& path,
                    std::vector<std::pair<std::string, std::string>>& params) {
  std::size_t named = 0;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (!names_parameter(tmpl[i])) {
      if (tmpl[i] != path[i]) return false;
    } else if (path[i].empty()) {
      return false;
    } else {
      ++named;
    }
  }
  std::vector<std::pair<std::string, std::string>> found;
  found.reserve(named);
  for (std::size_t i = 0; i < tmpl.size() && named > 0; ++i) {
    if (!names_parameter(tmpl[i])) continue;
    std::string value;
    if (!percent_decode_segment(path[i], value)) return false;
    found.emplace_back(std::string{tmpl[i].substr(1, tmpl[i].size() - 2)}, std::move(value));
  }
  params = std::move(found);
  return true;
}

}  // namespace

bool percent_decode_segment(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = domain::hex_digit(in[i + 1]), lo = domain::hex_digit(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '/') return false;
      out.push_back(decoded);
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return true;
}

route_table::route_table(const std::vector<route>& routes) {
  for (const auto& r : routes) {
    // A template not starting with '/' matches no path (as the path's own split gives none).
    auto parts = segments(r.path_template);
    if (parts.empty()) continue;
    if (by_length_.size() <= parts.size()) by_length_.resize(parts.size() + 1);
    by_length_[parts.size()].push_back(entry{&r, std::move(parts)});
  }
}

route_match route_table::match(std::string_view method, std::string_view path) const {
  route_match m;
  auto parts = segments(path);
  if (parts.empty() || parts.size() >= by_length_.size()) return m;
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& e : by_length_[parts.size()]) {
    if (!match_template(e.segments, parts, params)) continue;
    const auto& r = *e.r;
    if (r.method == method) {
      m.found = &r;
      m.params = std::move(params);
      m.allow.clear();
      return m;
    }
    if (m.allow.find(r.method) == std::string::npos) {
      if (!m.allow.empty()) m.allow += ", ";
      m.allow += r.method;
      if (r.method == "GET") m.allow += ", HEAD";  // the session answers HEAD on every GET route
    }
  }
  return m;
}

route_match match_route(const std::vector<route>& routes, std::string_view method, std::string_view path) {
  return route_table{routes}.match(method, path);
}

}  // namespace cl::http
