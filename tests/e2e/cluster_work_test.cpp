// Work done once among the nodes (issue 42, item 5), with two nodes on one PostgreSQL database in
// one process: webhook delivery runs on the node holding its lease, and moves to the other when
// that node stops; the rate limit per client holds across both nodes within the stated tolerance.

#include "tests/e2e/two_nodes.hpp"
#include "tests/e2e/webhook_receiver.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/service_fixture.hpp"
#include "tests/support/test_keys.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <set>

using namespace cl::testing;
namespace json = boost::json;

namespace {

std::string resource(const std::string& title) {
  return R"({"title":")" + title + R"(","type":"CHAPTER","language":"en","content":{"format":"cl.content/1",)"
         R"("blocks":[{"type":"paragraph","key":"p1","children":[{"type":"span","text":"x"}]}]}})";
}

void webhooks_on_loopback(cl::config::settings& s) {
  set_option(s, "webhooks.https_only", "false");
  set_option(s, "webhooks.allowed_networks", "127.0.0.0/8");
  set_option(s, "cluster.lease_ttl_ms", "600");
}

}  // namespace

TEST_CASE("webhooks are delivered by the node holding the lease, each message once; another node takes over",
          "[postgresql][nodes][leases]") {
  webhook_receiver rx;
  two_nodes nodes{{}, webhooks_on_loopback};
  const std::string held = "contentlake_lease_held{lease=\"webhooks\"}";
  // A started first: it holds every lease; B none.
  CHECK(metric(nodes.a.admin_port(), held) == 1);
  CHECK(metric(nodes.b.admin_port(), held) == 0);
  CHECK(metric(nodes.a.admin_port(), "contentlake_lease_held{lease=\"pruning\"}") == 1);
  CHECK(metric(nodes.b.admin_port(), "contentlake_lease_held{lease=\"upload-expiry\"}") == 0);
  // The record store's pool, per node (storage.postgresql.pool_size, 8 by default).
  CHECK(metric(nodes.a.admin_port(), "contentlake_postgresql_pool_size") == 8);
  auto in_use = metric(nodes.b.admin_port(), "contentlake_postgresql_connections_in_use");
  CHECK((in_use >= 0 && in_use <= 8));

  auto token = token_with("content-lake.read content-lake.write webhooks.read webhooks.write");
  // Created through B, which does not deliver: A's dispatcher reads it from the database.
  auto hook = post_json(nodes.b.port(), "/v0/content-lake/webhooks", token,
                        R"({"url":")" + rx.url("/hook") + R"(","event_types":["resource.created"]})");
  REQUIRE(hook);
  REQUIRE(hook->status == 201);
  std::set<std::string> created;
  for (int i = 0; i < 6; ++i) {
    auto r = post_json(i % 2 ? nodes.b.port() : nodes.a.port(), "/v0/content-lake/resources", token,
                       resource("Kelp " + std::to_string(i)));
    REQUIRE(r);
    REQUIRE(r->status == 201);
    created.insert(std::string{json::parse(r->body).at("id").as_string()});
  }
  auto delivered_ids = [&] {
    std::map<std::string, int> by_resource;
    for (const auto& d : rx.deliveries()) {
      auto body = json::parse(d.body);
      by_resource[std::string{body.at("resource_id").as_string()}]++;
    }
    return by_resource;
  };
  REQUIRE(eventually([&] { return delivered_ids().size() == created.size(); }));
  // Only A attempted deliveries; each message came once.
  CHECK(metric(nodes.b.admin_port(), "contentlake_webhook_attempts_total") == 0);
  CHECK(metric(nodes.a.admin_port(), "contentlake_webhook_attempts_total") == static_cast<double>(created.size()));
  std::set<std::string> ids;
  for (const auto& d : rx.deliveries()) CHECK(ids.insert(d.id).second);
  for (const auto& [id, n] : delivered_ids()) CHECK(n == 1);

  // A stops (its lease is not given up until the process ends: B takes it when it lapses).
  auto stopped = std::chrono::steady_clock::now();
  REQUIRE(nodes.a.stop_and_wait() == 0);
  auto late = post_json(nodes.b.port(), "/v0/content-lake/resources", token, resource("Kelp late"));
  REQUIRE(late);
  REQUIRE(late->status == 201);
  std::string late_id{json::parse(late->body).at("id").as_string()};
  REQUIRE(eventually([&] { return delivered_ids().count(late_id) == 1; }));
  // B took the lease A held (a condition, not a duration: a slow machine only waits longer; the
  // bound, the time to live plus a third of it, is measured by bench/cluster, not asserted here).
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - stopped);
  WARN("webhook delivery moved to node B " << took.count() << " ms after node A stopped (lease ttl 600 ms)");
  CHECK(metric(nodes.b.admin_port(), held) == 1);
  CHECK(metric(nodes.b.admin_port(), "contentlake_webhook_attempts_total") == 1);
  CHECK(delivered_ids().size() == created.size() + 1);
}

TEST_CASE("an endpoint disabled and enabled again through the node that does not deliver gets the changes "
          "made meanwhile", "[postgresql][nodes][leases]") {
  // A holds the webhooks lease and rereads the endpoints only every second: the changes to the
  // endpoint, made through B, reach A's dispatcher by the database alone.
  webhook_receiver rx;
  two_nodes nodes{{}, webhooks_on_loopback};
  REQUIRE(metric(nodes.a.admin_port(), "contentlake_lease_held{lease=\"webhooks\"}") == 1);
  auto token = token_with("content-lake.read content-lake.write webhooks.read webhooks.write");
  auto hook_at = [&](const std::string& path) {
    auto r = post_json(nodes.b.port(), "/v0/content-lake/webhooks", token,
                       R"({"url":")" + rx.url(path) + R"(","event_types":["resource.created"]})");
    REQUIRE(r);
    REQUIRE(r->status == 201);
    return std::string{json::parse(r->body).at("id").as_string()};
  };
  auto create = [&](const std::string& title) {
    auto r = post_json(nodes.b.port(), "/v0/content-lake/resources", token, resource(title));
    REQUIRE(r);
    REQUIRE(r->status == 201);
    return std::string{json::parse(r->body).at("id").as_string()};
  };
  auto got = [&](const std::string& path, const std::string& resource_id) {
    for (const auto& d : rx.deliveries())
      if (d.target == path && json::parse(d.body).at("resource_id").as_string() == resource_id) return true;
    return false;
  };
  auto set_enabled = [&](const std::string& id, bool on) {
    auto r = http_request(nodes.b.port(), "PATCH", "/v0/content-lake/webhooks/" + id,
                          {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
                          on ? R"({"enabled":true})" : R"({"enabled":false})");
    REQUIRE(r);
    REQUIRE(r->status == 200);
  };
  hook_at("/probe");
  auto paused = hook_at("/paused");
  // Both endpoints known to A and caught up.
  auto first = create("Before the pause");
  REQUIRE(eventually([&] { return got("/probe", first) && got("/paused", first); }));
  set_enabled(paused, false);
  auto meanwhile = create("While paused");
  // A has handled the change (the other endpoint has it): it found the paused endpoint disabled.
  REQUIRE(eventually([&] { return got("/probe", meanwhile); }));
  CHECK_FALSE(got("/paused", meanwhile));
  set_enabled(paused, true);
  // Enabled again, it goes on from where it stopped: the change made meanwhile arrives.
  CHECK(eventually([&] { return got("/paused", meanwhile); }, 5000));
  auto after = create("After the pause");
  CHECK(eventually([&] { return got("/paused", after) && got("/probe", after); }));
}

TEST_CASE("a client bursting through two nodes is admitted at most its quota plus the stated tolerance",
          "[postgresql][nodes][rate]") {
  const double rate = 10, burst = 10;
  const auto share = std::chrono::milliseconds{50};
  two_nodes nodes{{}, [&](cl::config::settings& s) {
                    s.rate_limit.requests_per_second = rate;
                    s.rate_limit.burst = burst;
                    set_option(s, "cluster.rate_limit_share_ms", std::to_string(share.count()));
                  }};
  auto token = token_with("content-lake.read");
  int admitted = 0, refused = 0;
  auto began = std::chrono::steady_clock::now();
  const auto length = std::chrono::seconds{3};
  // Requests as fast as the nodes answer them, alternating, for the whole period.
  for (int i = 0; std::chrono::steady_clock::now() - began < length; ++i) {
    auto r = get_with_token(i % 2 ? nodes.b.port() : nodes.a.port(), "/v0/content-lake/resources/res_missing", token);
    REQUIRE(r);
    if (r->status == 429) ++refused;
    else ++admitted;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  double quota = burst + rate * seconds;
  // docs/operations.md: the other node's admissions in one share interval before this one is
  // charged: at most its burst from rest, and its refill over the interval and the exchange. The
  // exchange is allowed half a second here (a loaded test machine delays the sharing thread); lone
  // limiters would still admit 20 more than this bound.
  double tolerance = burst + 2 * rate * std::max(0.5, 2 * std::chrono::duration<double>(share).count());
  WARN("two nodes admitted " << admitted << " of " << admitted + refused << " requests in " << seconds
                             << " s; quota " << quota << ", tolerance " << tolerance
                             << " (two limiters alone would admit up to " << 2 * quota << ")");
  CHECK(admitted <= quota + tolerance);
  CHECK(admitted >= rate * seconds);  // sharing does not starve the client
  CHECK(refused > 0);
}
