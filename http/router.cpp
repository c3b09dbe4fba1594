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

/// Matches one template against the path's segments; fills `params` on success. Walks the
/// template in place (no allocation until it matches: every request tries every route before it).
bool match_template(std::string_view tmpl, const std::vector<std::string_view>& path,
                    std::vector<std::pair<std::string, std::string>>& params) {
  if (tmpl.empty() || tmpl.front() != '/') return path.empty();
  std::size_t start = 1, i = 0, named = 0;
  // First pass: literal segments and the segment count, without copying anything.
  while (true) {
    auto slash = tmpl.find('/', start);
    auto t = tmpl.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (i >= path.size()) return false;
    if (t.size() > 2 && t.front() == '{' && t.back() == '}') {
      if (path[i].empty()) return false;
      ++named;
    } else if (t != path[i]) {
      return false;
    }
    ++i;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (i != path.size()) return false;
  std::vector<std::pair<std::string, std::string>> found;
  found.reserve(named);
  if (named > 0) {
    start = 1;
    i = 0;
    while (true) {
      auto slash = tmpl.find('/', start);
      auto t = tmpl.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
      if (t.size() > 2 && t.front() == '{' && t.back() == '}') {
        std::string value;
        if (!percent_decode_segment(path[i], value)) return false;
        found.emplace_back(std::string{t.substr(1, t.size() - 2)}, std::move(value));
      }
      ++i;
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
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
      if (decoded == '/' || decoded == '\0') return false;
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
