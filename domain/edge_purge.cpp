#include "domain/edge_purge.hpp"

#include <string_view>

namespace cl::domain {

std::variant<purge_target, std::string> parse_purge_url(const std::string& url) {
  constexpr std::string_view scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0) return std::string{"expected an http:// URL"};
  auto rest = url.substr(scheme.size());
  auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  purge_target t;
  t.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (authority.find('@') != std::string::npos) return std::string{"user info is not allowed"};
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) return std::string{"an unclosed IPv6 literal"};
    t.host = authority.substr(1, close - 1);
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::string{"unexpected text after the IPv6 literal"};
      t.port = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    t.host = authority.substr(0, colon);
    if (colon != std::string::npos) t.port = authority.substr(colon + 1);
  }
  if (t.host.empty()) return std::string{"no host"};
  if (t.port.empty() || t.port.size() > 5 || t.port.find_first_not_of("0123456789") != std::string::npos
      || std::stoi(t.port) == 0 || std::stoi(t.port) > 65535)
    return std::string{"the port is not a number from 1 to 65535"};
  return t;
}

}  // namespace cl::domain
