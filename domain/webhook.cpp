#include "domain/webhook.hpp"

#include "domain/aead.hpp"
#include "domain/base64url.hpp"
#include "domain/records.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>

namespace cl::domain {

namespace {

constexpr std::string_view secret_prefix = "whsec_";

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

ip_network v4_network(unsigned char a, unsigned char b, unsigned char c, unsigned char d, int prefix) {
  ip_network n;
  n.base[10] = n.base[11] = 0xff;
  n.base[12] = a;
  n.base[13] = b;
  n.base[14] = c;
  n.base[15] = d;
  n.prefix = 96 + prefix;
  return n;
}

ip_network v6_network(std::string_view text, int prefix) {
  return ip_network{*parse_ip(text), prefix};
}

/// The ranges no delivery reaches unless the operator's allowlist names them.
const std::vector<ip_network>& refused_networks() {
  static const std::vector<ip_network> nets = {
    v4_network(0, 0, 0, 0, 8),         // "this" network, unspecified
    v4_network(10, 0, 0, 0, 8),        // private
    v4_network(100, 64, 0, 0, 10),     // CGNAT (shared address space)
    v4_network(127, 0, 0, 0, 8),       // loopback
    v4_network(169, 254, 0, 0, 16),    // link-local (cloud metadata services)
    v4_network(172, 16, 0, 0, 12),     // private
    v4_network(192, 0, 0, 0, 24),      // IETF protocol assignments
    v4_network(192, 0, 2, 0, 24),      // documentation (TEST-NET-1)
    v4_network(192, 88, 99, 0, 24),    // 6to4 relay anycast
    v4_network(192, 168, 0, 0, 16),    // private
    v4_network(198, 18, 0, 0, 15),     // benchmarking
    v4_network(198, 51, 100, 0, 24),   // documentation (TEST-NET-2)
    v4_network(203, 0, 113, 0, 24),    // documentation (TEST-NET-3)
    v4_network(224, 0, 0, 0, 4),       // multicast
    v4_network(240, 0, 0, 0, 4),       // reserved, and the broadcast address
    v6_network("::", 96),              // unspecified, loopback, IPv4-compatible
    v6_network("64:ff9b::", 96),       // NAT64
    v6_network("64:ff9b:1::", 48),     // local-use NAT64
    v6_network("100::", 64),           // discard
    v6_network("2001::", 23),          // IETF protocol assignments (Teredo among them)
    v6_network("2001:db8::", 32),      // documentation
    v6_network("2002::", 16),          // 6to4
    v6_network("3fff::", 20),          // documentation
    v6_network("fc00::", 7),           // unique local
    v6_network("fe80::", 10),          // link-local
    v6_network("fec0::", 10),          // site-local (deprecated)
    v6_network("ff00::", 8),           // multicast
  };
  return nets;
}

}  // namespace

std::string new_webhook_secret() {
  return std::string{secret_prefix} + base64_encode(random_bytes(32));
}

std::optional<std::string> webhook_secret_key(std::string_view secret) {
  if (secret.substr(0, secret_prefix.size()) != secret_prefix) return std::nullopt;
  auto key = base64_decode(secret.substr(secret_prefix.size()));
  if (!key || key->size() < 24 || key->size() > 64) return std::nullopt;
  return key;
}

std::string seal_webhook_secret(std::string_view key, std::string_view secret) {
  return base64url_encode(aead_seal(key, secret));
}

std::optional<std::string> open_webhook_secret(std::string_view key, std::string_view sealed) {
  auto raw = base64url_decode(sealed);
  if (!raw) return std::nullopt;
  return aead_open(key, *raw);
}

std::string webhook_signature(std::string_view key, std::string_view id, std::int64_t timestamp, std::string_view body) {
  std::string signed_content;
  signed_content.reserve(id.size() + body.size() + 24);
  signed_content.append(id).append(".").append(std::to_string(timestamp)).append(".").append(body);
  return "v1," + base64_encode(hmac_sha256(key, signed_content));
}

std::variant<webhook_target, std::string> parse_webhook_url(std::string_view url, bool https_only) {
  if (url.size() > 2048) return std::string{"is longer than 2,048 characters"};
  for (char c : url)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return std::string{"must not contain spaces, control or non-ASCII characters"};
  webhook_target t;
  auto scheme_end = url.find("://");
  auto scheme = scheme_end == std::string_view::npos ? std::string{} : lower(url.substr(0, scheme_end));
  if (scheme == "https") {
    t.tls = true;
    t.port = "443";
  } else if (scheme == "http" && !https_only) {
    t.tls = false;
    t.port = "80";
  } else {
    return std::string{https_only ? "must be an https URL" : "must be an http or https URL"};
  }
  auto rest = url.substr(scheme_end + 3);
  if (rest.find('#') != std::string_view::npos) return std::string{"must not have a fragment"};
  auto path_start = std::min(rest.find('/'), rest.find('?'));
  auto authority = rest.substr(0, path_start);
  t.target = path_start == std::string_view::npos ? "/" : std::string{rest.substr(path_start)};
  if (!t.target.empty() && t.target.front() == '?') t.target.insert(0, "/");
  if (authority.find('@') != std::string_view::npos) return std::string{"must not carry user information"};
  std::string_view port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return std::string{"has a malformed host"};
    t.host = lower(authority.substr(1, close - 1));
    auto tail = authority.substr(close + 1);
    if (!tail.empty() && tail.front() != ':') return std::string{"has a malformed host"};
    has_port = !tail.empty();
    if (has_port) port = tail.substr(1);
    if (!parse_ip(t.host)) return std::string{"has a malformed IPv6 address"};
  } else {
    auto colon = authority.rfind(':');
    t.host = lower(authority.substr(0, colon));
    has_port = colon != std::string_view::npos;
    if (has_port) port = authority.substr(colon + 1);
  }
  if (t.host.empty()) return std::string{"must name a host"};
  for (char c : t.host)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == ':'))
      return std::string{"has a host name with characters a host name cannot have"};
  if (host_ends_in_number(t.host) && !host_address(t.host)) return std::string{"has a malformed IPv4 address"};
  if (has_port) {
    unsigned n = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || n == 0 || n > 65535)
      return std::string{"has a port that is not 1 to 65535"};
    t.port = std::to_string(n);
  }
  return t;
}

std::optional<ip_address> parse_ip(std::string_view text) {
  if (text.size() > 64) return std::nullopt;
  std::string s{text};
  ip_address a{};
  in_addr v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    a[10] = a[11] = 0xff;
    std::copy_n(reinterpret_cast<const unsigned char*>(&v4), 4, a.begin() + 12);
    return a;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    std::copy_n(reinterpret_cast<const unsigned char*>(&v6), 16, a.begin());
    return a;
  }
  return std::nullopt;
}

bool host_ends_in_number(std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  auto dot = host.rfind('.');
  auto last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty()) return false;
  auto all = [](std::string_view s, int (*is)(int)) {
    return std::all_of(s.begin(), s.end(), [is](char c) { return is(static_cast<unsigned char>(c)) != 0; });
  };
  if (last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X')) return all(last.substr(2), isxdigit);
  return all(last, isdigit);
}

std::optional<ip_address> host_address(std::string_view host) {
  if (host.size() > 64) return std::nullopt;
  if (host.find(':') != std::string_view::npos) return parse_ip(host);
  if (!host_ends_in_number(host)) return std::nullopt;
  std::string h{host};
  if (h.back() == '.') h.pop_back();
  in_addr v4{};
  if (inet_aton(h.c_str(), &v4) == 0) return std::nullopt;
  ip_address a{};
  a[10] = a[11] = 0xff;
  std::copy_n(reinterpret_cast<const unsigned char*>(&v4), 4, a.begin() + 12);
  return a;
}

bool ip_network::contains(const ip_address& a) const {
  int bits = prefix;
  for (std::size_t i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    unsigned mask = bits >= 8 ? 0xffu : (0xffu << (8 - bits)) & 0xffu;
    if ((a[i] & mask) != (base[i] & mask)) return false;
  }
  return true;
}

std::variant<std::vector<ip_network>, std::string> parse_networks(std::string_view list) {
  std::vector<ip_network> out;
  std::size_t start = 0;
  while (start < list.size()) {
    auto end = list.find_first_of(", ", start);
    if (end == std::string_view::npos) end = list.size();
    auto item = list.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    auto slash = item.find('/');
    auto address = parse_ip(item.substr(0, slash));
    if (!address) return std::string{item};
    bool v4 = item.substr(0, slash).find(':') == std::string_view::npos;
    int prefix = v4 ? 32 : 128;
    if (slash != std::string_view::npos) {
      auto digits = item.substr(slash + 1);
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
      if (ec != std::errc{} || p != digits.data() + digits.size() || prefix < 0 || prefix > (v4 ? 32 : 128))
        return std::string{item};
    }
    out.push_back(ip_network{*address, v4 ? prefix + 96 : prefix});
  }
  return out;
}

bool address_allowed(const ip_address& a, const std::vector<ip_network>& allowed) {
  auto in = [&a](const ip_network& n) { return n.contains(a); };
  if (std::any_of(allowed.begin(), allowed.end(), in)) return true;
  return std::none_of(refused_networks().begin(), refused_networks().end(), in);
}

std::optional<std::vector<std::int64_t>> parse_retry_schedule(std::string_view list) {
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = std::min(list.find(',', start), list.size());
    std::string item{list.substr(start, end - start)};
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    start = end + 1;
    if (item.empty()) return std::nullopt;
    char* stop = nullptr;
    double seconds = std::strtod(item.c_str(), &stop);
    if (stop != item.c_str() + item.size() || !std::isfinite(seconds) || seconds < 0 || seconds > 7 * 86400.0)
      return std::nullopt;
    out.push_back(static_cast<std::int64_t>(std::llround(seconds * 1000)));
    if (end == list.size()) break;
  }
  if (out.empty() || out.size() > 50) return std::nullopt;
  return out;
}

std::int64_t with_jitter(std::int64_t delay_ms, double unit) {
  return delay_ms + static_cast<std::int64_t>(std::llround(static_cast<double>(delay_ms) * 0.1 * (2 * unit - 1)));
}

attempt_verdict judge_attempt(const attempt_facts& a, const std::vector<std::int64_t>& schedule_ms,
                              std::int64_t disable_after_ms, std::int64_t failing_since_ms, bool enabled,
                              std::int64_t now_ms, double jitter_unit) {
  attempt_verdict v;
  if (a.delivered) {
    v.outcome = "delivered";
    return v;
  }
  v.failing_since_ms = failing_since_ms == 0 ? a.at_ms : failing_since_ms;
  if (a.status == 410) {
    // The receiver says the endpoint is gone: no more attempts, the endpoint is disabled.
    v.outcome = "abandoned";
    v.disable = true;
    v.disabled_reason = "The endpoint answered 410 Gone.";
    return v;
  }
  auto index = static_cast<std::size_t>(std::max<std::int32_t>(a.attempt, 1) - 1);
  if (index >= schedule_ms.size()) {
    v.outcome = "abandoned";
  } else {
    v.outcome = "failed";
    v.next_attempt_ms = now_ms + std::max(with_jitter(schedule_ms[index], jitter_unit), a.retry_after_ms);
  }
  if (enabled && now_ms - v.failing_since_ms > disable_after_ms) {
    v.disable = true;
    v.disabled_reason = "Every delivery failed since " + iso8601_at_ms(v.failing_since_ms) + ".";
  }
  return v;
}

std::optional<std::int64_t> retry_after_ms(std::string_view value, std::int64_t now_s) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  std::int64_t seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (!value.empty() && ec == std::errc{} && end == value.data() + value.size() && seconds >= 0)
    return std::min<std::int64_t>(seconds, 7 * 86400) * 1000;
  // An HTTP date (IMF-fixdate): Sun, 06 Nov 1994 08:49:37 GMT
  std::tm tm{};
  std::string text{value};
  auto* parsed = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!parsed || *parsed != '\0') return std::nullopt;
  auto at = static_cast<std::int64_t>(timegm(&tm));
  return std::clamp<std::int64_t>(at - now_s, 0, 7 * 86400) * 1000;
}

}  // namespace cl::domain
