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

/// Calls `f(segment)` for each segment of template `tmpl` ("/a/{b}/c") in order; false as soon as
/// `f` answers false.
template <class F>
bool walk_segments(std::string_view tmpl, F f) {
  for (std::size_t start = 1;;) {
    auto slash = tmpl.find('/', start);
    if (!f(tmpl.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start))) return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

bool names_parameter(std::string_view t) { return t.size() > 2 && t.front() == '{' && t.back() == '}'; }

/// Matches one template against the path's segments; fills `params` on success. Compares in place
/// and decodes parameters only for a match (every request tries every route until one matches).
bool match_template(std::string_view tmpl, const std::vector<std::string_view>& path,
                    std::vector<std::pair<std::string, std::string>>& params) {
  if (tmpl.empty() || tmpl.front() != '/') return path.empty();
  std::size_t i = 0, named = 0;
  bool same = walk_segments(tmpl, [&](std::string_view t) {
    if (i >= path.size()) return false;
    const auto& p = path[i++];
    if (!names_parameter(t)) return t == p;
    ++named;
    return !p.empty();
  });
  if (!same || i != path.size()) return false;
  std::vector<std::pair<std::string, std::string>> found;
  found.reserve(named);
  i = 0;
  bool decoded = named == 0 || walk_segments(tmpl, [&](std::string_view t) {
    const auto& p = path[i++];
    if (!names_parameter(t)) return true;
    std::string value;
    if (!percent_decode_segment(p, value)) return false;
    found.emplace_back(std::string{t.substr(1, t.size() - 2)}, std::move(value));
    return true;
  });
  if (!decoded) return false;
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

route_match match_route(const std::vector<route>& routes, std::string_view method, std::string_view path) {
  route_match m;
  auto parts = segments(path);
  if (parts.empty()) return m;
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& r : routes) {
    if (!match_template(r.path_template, parts, params)) continue;
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

}  // namespace cl::http
