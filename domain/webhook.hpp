#pragma once
/// Outbound webhooks (issue 29, part 2), what needs no actor: Standard Webhooks 1.0 signing and
/// secrets (`whsec_` + base64 of 32 random bytes), the target URL check, the address policy that
/// keeps deliveries off the service's own networks (SSRF), and the retry schedule.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cl::domain {

/// One HTTP delivery: where, what, and the Standard Webhooks headers (signed already).
struct webhook_request {
  std::string url;
  std::string body;
  std::string message_id;      ///< `webhook-id`
  std::int64_t timestamp = 0;  ///< `webhook-timestamp` (Unix seconds)
  std::string signature;       ///< `webhook-signature`: one or two `v1,...` separated by a space
  std::int64_t timeout_ms = 10000;
};

/// What a delivery attempt came to.
struct webhook_response {
  std::int32_t status = 0;           ///< the HTTP status; 0 when none came
  std::string error;                 ///< empty on 2xx; else an error class (docs/api.md "Webhooks")
  std::int64_t latency_ms = 0;
  std::int64_t retry_after_ms = -1;  ///< what a `Retry-After` header asked for; -1 when none
};

/// A new signing secret: `whsec_` and the standard base64 of 32 random bytes.
std::string new_webhook_secret();

/// The key bytes of a `whsec_` secret (the base64 after the prefix), or nullopt when it is not one.
std::optional<std::string> webhook_secret_key(std::string_view secret);

/// A signing secret as the store keeps it: sealed under the data dir's webhook key (32 bytes), so
/// a copy of the database alone does not give the secrets away.
std::string seal_webhook_secret(std::string_view key, std::string_view secret);

/// The secret `seal_webhook_secret` sealed, or nullopt (another key, or altered).
std::optional<std::string> open_webhook_secret(std::string_view key, std::string_view sealed);

/// One `v1,<base64>` signature: HMAC-SHA256 under `key` of "`id`.`timestamp`.`body`".
std::string webhook_signature(std::string_view key, std::string_view id, std::int64_t timestamp, std::string_view body);

/// Where a delivery goes: the URL split for a client that resolves and checks the host itself.
struct webhook_target {
  bool tls = true;
  std::string host;    ///< a name, or an address literal (IPv6 without brackets)
  std::string port;    ///< "443", "80", or the URL's
  std::string target;  ///< path and query, at least "/"
};

/// The target of `url`, or why it is refused: `https` only unless `https_only` is false (then
/// `http` too); a host; no user info (credentials would end up in logs); no fragment; at most 2,048
/// characters.
std::variant<webhook_target, std::string> parse_webhook_url(std::string_view url, bool https_only);

/// An IP address as 16 bytes (IPv4 as its IPv4-mapped IPv6 form, so one range check covers both).
using ip_address = std::array<unsigned char, 16>;

/// The address `text` spells (IPv4 dotted quad or IPv6), or nullopt.
std::optional<ip_address> parse_ip(std::string_view text);

/// The address URL host `host` names when it is an address: an IPv6 literal (without brackets), or
/// an IPv4 address in any form a resolver reads as one (`inet_aton`: `127.1`, `0x7f.1`, `0177.0.0.1`,
/// `2130706433`, `0`, with or without one trailing dot); nullopt for a name. The creation check and
/// the delivery client read a host with this one function, so a form one accepts is never another
/// address to the other.
std::optional<ip_address> host_address(std::string_view host);

/// True when `host` ends in a number (its last label, after one trailing dot, is decimal digits or
/// `0x` and hex digits): such a host is an IPv4 address or malformed, never a name (WHATWG URL).
bool host_ends_in_number(std::string_view host);

/// A network: an address and a prefix length over the 16 bytes.
struct ip_network {
  ip_address base{};
  int prefix = 0;
  bool contains(const ip_address& a) const;
};

/// The networks of a comma- or space-separated list of CIDRs (`10.0.0.0/8, ::1/128`), or the
/// first entry that is not one.
std::variant<std::vector<ip_network>, std::string> parse_networks(std::string_view list);

/// Whether a delivery may connect to `a`: yes when `allowed` names it; otherwise no when it is
/// loopback, private, link-local, CGNAT, multicast, reserved, unspecified, a documentation or
/// benchmarking range, or an IPv6 form that embeds such an IPv4 address (mapped, compatible,
/// NAT64, 6to4, Teredo); yes otherwise.
bool address_allowed(const ip_address& a, const std::vector<ip_network>& allowed);

/// The retry delays after a failed attempt, in milliseconds, from a comma-separated list of
/// seconds (decimals allowed: `0.05,0.1` in tests), or nullopt when it is not one. The Standard
/// Webhooks schedule is `5,300,1800,7200,18000,36000,36000`.
std::optional<std::vector<std::int64_t>> parse_retry_schedule(std::string_view list);

/// `delay_ms` moved by up to a tenth either way, `unit` in [0, 1) choosing where.
std::int64_t with_jitter(std::int64_t delay_ms, double unit);

/// What one delivery attempt means for its message and its endpoint (the retry schedule).
struct attempt_facts {
  std::int32_t attempt = 1;         ///< 1 for the first
  bool delivered = false;           ///< a 2xx answer
  int status = 0;                   ///< the answer's status (0: none)
  std::int64_t at_ms = 0;           ///< when the attempt started
  std::int64_t retry_after_ms = 0;  ///< what the answer's `Retry-After` asked for (0: nothing)
};
struct attempt_verdict {
  std::string outcome;  ///< `delivered`, `failed` (a retry is due) or `abandoned`
  std::int64_t next_attempt_ms = 0;  ///< `failed`: when the next attempt is due
  std::int64_t failing_since_ms = 0;  ///< the endpoint's, after this attempt (0: not failing)
  bool disable = false;  ///< the endpoint is disabled, for `disabled_reason`
  std::string disabled_reason;
};
/// The verdict on attempt `a` of an endpoint failing since `failing_since_ms` (0: not failing):
/// delivered clears the failing state; 410 Gone abandons the message and disables the endpoint;
/// another failure schedules the next attempt `schedule_ms[attempt - 1]` later (moved by
/// `with_jitter(.., jitter_unit)`, never sooner than `Retry-After`) or abandons the message past the
/// schedule, and disables an `enabled` endpoint failing for longer than `disable_after_ms`.
attempt_verdict judge_attempt(const attempt_facts& a, const std::vector<std::int64_t>& schedule_ms,
                              std::int64_t disable_after_ms, std::int64_t failing_since_ms, bool enabled,
                              std::int64_t now_ms, double jitter_unit);

/// The delay a `Retry-After` value asks for (delta seconds, or an HTTP date against `now_s`), in
/// milliseconds, or nullopt when it is neither.
std::optional<std::int64_t> retry_after_ms(std::string_view value, std::int64_t now_s);

}  // namespace cl::domain
