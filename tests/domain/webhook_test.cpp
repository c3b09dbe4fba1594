// Webhooks without actors: Standard Webhooks signatures and secrets, the URL check, the address
// policy (SSRF) and the retry schedule.

#include "domain/base64url.hpp"
#include "domain/webhook.hpp"

#include <catch2/catch.hpp>

using namespace cl::domain;

namespace {

bool allowed(const char* address, const std::vector<ip_network>& allowlist = {}) {
  auto a = parse_ip(address);
  REQUIRE(a);
  return address_allowed(*a, allowlist);
}

std::vector<ip_network> networks(const char* list) {
  auto parsed = parse_networks(list);
  REQUIRE(std::holds_alternative<std::vector<ip_network>>(parsed));
  return std::get<std::vector<ip_network>>(parsed);
}

webhook_target target(const char* url, bool https_only = true) {
  auto parsed = parse_webhook_url(url, https_only);
  INFO(url);
  REQUIRE(std::holds_alternative<webhook_target>(parsed));
  return std::get<webhook_target>(parsed);
}

bool refused(const char* url, bool https_only = true) {
  return std::holds_alternative<std::string>(parse_webhook_url(url, https_only));
}

}  // namespace

TEST_CASE("the Standard Webhooks published vector signs as the spec says", "[webhooks]") {
  auto key = webhook_secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  REQUIRE(key);
  CHECK(webhook_signature(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232314})")
        == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  // Any other id, time or body signs differently.
  CHECK(webhook_signature(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265331, R"({"test": 2432232314})")
        != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST_CASE("a new secret is whsec_ and the base64 of 32 random bytes", "[webhooks]") {
  auto a = new_webhook_secret(), b = new_webhook_secret();
  CHECK(a != b);
  CHECK(a.rfind("whsec_", 0) == 0);
  auto key = webhook_secret_key(a);
  REQUIRE(key);
  CHECK(key->size() == 32);
  CHECK_FALSE(webhook_secret_key("whsec_not base64!"));
  CHECK_FALSE(webhook_secret_key("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
  CHECK(base64_decode(base64_encode("ab")) == std::optional<std::string>{"ab"});
  CHECK(base64_encode("\xfb\xff") == "+/8=");
  CHECK_FALSE(base64_decode("-_8="));
}

TEST_CASE("a webhook URL is https with a host and nothing that would leak", "[webhooks]") {
  auto t = target("https://hooks.example.com/in?x=1");
  CHECK(t.tls);
  CHECK(t.host == "hooks.example.com");
  CHECK(t.port == "443");
  CHECK(t.target == "/in?x=1");
  CHECK(target("https://Example.COM:8443").target == "/");
  CHECK(target("https://Example.COM:8443").port == "8443");
  CHECK(target("https://[2001:db8::1]:9000/x").host == "2001:db8::1");
  CHECK(refused("http://hooks.example.com/"));
  CHECK_FALSE(target("http://127.0.0.1:8080/hook", false).tls);
  CHECK(refused("ftp://hooks.example.com/", false));
  CHECK(refused("https://user:pass@hooks.example.com/"));
  CHECK(refused("https://hooks.example.com/#frag"));
  CHECK(refused("https:///path"));
  CHECK(refused("https://hooks.example.com:0/"));
  CHECK(refused("https://hooks.example.com:99999/"));
  CHECK(refused("https://hooks.example.com:/"));
  CHECK(refused("https://hooks example.com/"));
  CHECK(refused("https://[::1/"));
  CHECK(refused(("https://h.example.com/" + std::string(2100, 'a')).c_str()));
}

TEST_CASE("deliveries stay off loopback, private, link-local and reserved addresses", "[webhooks]") {
  for (const char* a : {"127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                        "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "240.0.0.1",
                        "192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1", "::1", "::", "fe80::1",
                        "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
                        "::127.0.0.1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "2001:0:4136:e378::1"}) {
    INFO(a);
    CHECK_FALSE(allowed(a));
  }
  for (const char* a : {"93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111"}) {
    INFO(a);
    CHECK(allowed(a));
  }
}

TEST_CASE("the operator's allowlist opens exactly the networks it names", "[webhooks]") {
  auto loopback = networks("127.0.0.0/8");
  CHECK(allowed("127.0.0.1", loopback));
  CHECK(allowed("::ffff:127.0.0.1", loopback));  // the mapped form is the same address
  CHECK_FALSE(allowed("10.0.0.1", loopback));
  CHECK_FALSE(allowed("::1", loopback));
  auto both = networks("10.1.0.0/16, ::1");
  CHECK(allowed("10.1.200.3", both));
  CHECK_FALSE(allowed("10.2.0.1", both));
  CHECK(allowed("::1", both));
  CHECK(std::holds_alternative<std::string>(parse_networks("10.0.0.0/33")));
  CHECK(std::holds_alternative<std::string>(parse_networks("example.com")));
  CHECK(std::get<std::vector<ip_network>>(parse_networks("")).empty());
}

TEST_CASE("the retry schedule is seconds, with jitter of a tenth, and Retry-After is read", "[webhooks]") {
  auto standard = parse_retry_schedule("5,300,1800,7200,18000,36000,36000");
  REQUIRE(standard);
  CHECK(standard->front() == 5000);
  CHECK(standard->back() == 36000000);
  CHECK(parse_retry_schedule("0.05, 0.1") == std::optional<std::vector<std::int64_t>>{{50, 100}});
  CHECK_FALSE(parse_retry_schedule(""));
  CHECK_FALSE(parse_retry_schedule("5,,6"));
  CHECK_FALSE(parse_retry_schedule("-1"));
  CHECK_FALSE(parse_retry_schedule("soon"));
  CHECK(with_jitter(1000, 0.0) == 900);
  CHECK(with_jitter(1000, 0.5) == 1000);
  CHECK(with_jitter(1000, 0.999) <= 1100);
  CHECK(retry_after_ms("120", 0) == std::optional<std::int64_t>{120000});
  CHECK(retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 30) == std::optional<std::int64_t>{30000});
  CHECK_FALSE(retry_after_ms("tomorrow", 0));
}

TEST_CASE("a host in any numeric form a resolver reads is the address it spells", "[webhooks][ssrf]") {
  auto loopback = *parse_ip("127.0.0.1");
  for (const char* host : {"2130706433", "0177.0.0.1", "0x7f.1", "127.1", "0x7f000001", "127.0.0.1.", "0x7F.0.0.1"}) {
    INFO(host);
    auto a = host_address(host);
    REQUIRE(a);
    CHECK(*a == loopback);
    CHECK_FALSE(address_allowed(*a, {}));
  }
  CHECK(host_address("0") == parse_ip("0.0.0.0"));
  CHECK(host_address("2852039166") == parse_ip("169.254.169.254"));
  CHECK(host_address("::1") == parse_ip("::1"));
  // Names stay names, whatever digits they hold.
  for (const char* name : {"example.com", "1.example.com", "hooks-2.example", "0x7f.example", "example.com."}) {
    INFO(name);
    CHECK_FALSE(host_address(name));
    CHECK_FALSE(host_ends_in_number(name));
  }
  // A host that ends in a number but is no address is malformed, not a name to resolve.
  CHECK(refused("https://1.2.3.4.5/"));
  CHECK(refused("https://999999999999/"));
  CHECK(refused("https://0x/"));
  CHECK(target("https://2130706433/in").host == "2130706433");  // the URL parses; the address policy refuses it
}

TEST_CASE("an attempt's verdict: delivered clears, 410 disables, a failure retries on the schedule or is abandoned", "[webhooks]") {
  const std::vector<std::int64_t> schedule{5000, 300000};
  const std::int64_t day = 86400 * 1000LL;
  const std::int64_t now = 1'700'000'000'000;
  SECTION("delivered: the endpoint is no longer failing") {
    auto v = judge_attempt({1, true, 200, now, 0}, schedule, 5 * day, now - 1000, true, now, 0.5);
    CHECK(v.outcome == "delivered");
    CHECK(v.failing_since_ms == 0);
    CHECK_FALSE(v.disable);
  }
  SECTION("a first failure: failing from its start, retried after the first delay (jitter a tenth either way)") {
    auto v = judge_attempt({1, false, 500, now - 20, 0}, schedule, 5 * day, 0, true, now, 0.5);
    CHECK(v.outcome == "failed");
    CHECK(v.failing_since_ms == now - 20);
    CHECK(v.next_attempt_ms == now + 5000);
    CHECK(judge_attempt({1, false, 500, now, 0}, schedule, 5 * day, 0, true, now, 0.0).next_attempt_ms == now + 4500);
    CHECK(judge_attempt({1, false, 500, now, 0}, schedule, 5 * day, 0, true, now, 0.999999).next_attempt_ms == now + 5500);
  }
  SECTION("Retry-After asks for later: never sooner than it") {
    auto v = judge_attempt({2, false, 429, now, 900000}, schedule, 5 * day, now - 10, true, now, 0.5);
    CHECK(v.next_attempt_ms == now + 900000);
    CHECK(v.failing_since_ms == now - 10);  // kept from before
  }
  SECTION("past the schedule: abandoned") {
    auto v = judge_attempt({3, false, 500, now, 0}, schedule, 5 * day, now - 10, true, now, 0.5);
    CHECK(v.outcome == "abandoned");
    CHECK(v.next_attempt_ms == 0);
  }
  SECTION("410 Gone: abandoned at once and the endpoint disabled") {
    auto v = judge_attempt({1, false, 410, now, 0}, schedule, 5 * day, 0, true, now, 0.5);
    CHECK(v.outcome == "abandoned");
    CHECK(v.disable);
    CHECK(v.disabled_reason == "The endpoint answered 410 Gone.");
  }
  SECTION("failing longer than the bound: an enabled endpoint is disabled, saying since when") {
    auto since = now - 5 * day - 1;
    auto v = judge_attempt({1, false, 503, now, 0}, schedule, 5 * day, since, true, now, 0.5);
    CHECK(v.outcome == "failed");
    CHECK(v.disable);
    CHECK(v.disabled_reason.find("Every delivery failed since 2023-11-") == 0);
    CHECK_FALSE(judge_attempt({1, false, 503, now, 0}, schedule, 5 * day, since, false, now, 0.5).disable);
    CHECK_FALSE(judge_attempt({1, false, 503, now, 0}, schedule, 5 * day, now - 5 * day, true, now, 0.5).disable);
  }
}
