// Route group: webhooks (issue 29, part 2): signed Standard Webhooks deliveries of the change
// feed's events. One dispatcher follows the change log for every enabled endpoint; its records
// live in the group's own store (storage/webhook_store.cpp); signing secrets are sealed under a key
// of its own in the data dir (`identity/webhook-secrets.key`); event ids are the feed's.
// /v0/content-lake/webhooks...

#include "actors/metrics.hpp"
#include "actors/events/webhook_dispatcher.hpp"
#include "actors/events/webhook_plans.hpp"
#include "app/groups.hpp"
#include "domain/webhook.hpp"
#include "http/webhook_client.hpp"
#include "storage/backend.hpp"
#include "storage/identity.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <cmath>

namespace cl::app {

namespace {

struct webhooks_settings {
  bool https_only = true;
  std::string allowed_networks;
  std::string retry_schedule_seconds = "5,300,1800,7200,18000,36000,36000";
  std::string disable_after_hours = "120";
  std::int64_t timeout_seconds = 10;
  std::int64_t concurrency = 16;
  std::int64_t keep_alive_seconds = 30;
  std::int64_t delivery_log_size = 1000;
  std::int64_t rotation_overlap_hours = 24;
  std::int64_t max_per_owner = 50;
  std::string ca_file;
};

caf::expected<std::vector<actors::child_spec>> spawn_webhooks(const startup& s) {
  if (!s.store) return startup_failure("webhooks need the record store");
  const auto& section = s.settings.groups.get<webhooks_settings>();
  auto networks = domain::parse_networks(section.allowed_networks);
  if (auto* bad = std::get_if<std::string>(&networks))
    return startup_failure("webhooks.allowed_networks: \"" + bad->substr(0, 64) + "\" is not a CIDR network");
  auto schedule = domain::parse_retry_schedule(section.retry_schedule_seconds);
  if (!schedule)
    return startup_failure("webhooks.retry_schedule_seconds: expected seconds separated by commas, e.g. 5,300,1800");
  char* end = nullptr;
  double disable_hours = std::strtod(section.disable_after_hours.c_str(), &end);
  if (end == section.disable_after_hours.c_str() || *end != '\0' || !std::isfinite(disable_hours) || disable_hours <= 0)
    return startup_failure("webhooks.disable_after_hours: expected a positive number of hours");

  auto policy = std::make_shared<actors::webhook_policy>();
  auto cfg = std::make_shared<actors::webhook_dispatcher_config>();
  try {
    policy->secret_key = storage::load_or_create_secret(secrets_of(s.settings), "webhook-secrets.key");
    cfg->ids = storage::feed_codec(secrets_of(s.settings), s.store ? s.store->deployment_id() : std::string{});
  } catch (const std::exception& e) {
    return startup_failure(std::string{"webhooks: "} + e.what());
  }
  policy->https_only = section.https_only;
  policy->allowed_networks = std::get<std::vector<domain::ip_network>>(networks);
  policy->rotation_overlap_ms = section.rotation_overlap_hours * 3600 * 1000;
  policy->max_per_owner = static_cast<std::size_t>(section.max_per_owner);

  http::webhook_client_options client;
  client.https_only = policy->https_only;
  client.allowed_networks = policy->allowed_networks;
  client.ca_file = section.ca_file;
  client.keep_alive = std::chrono::seconds{section.keep_alive_seconds};
  client.max_idle = static_cast<std::size_t>(2 * section.concurrency);
  std::shared_ptr<http::webhook_client> sender;
  try {
    sender = std::make_shared<http::webhook_client>(client);
  } catch (const std::exception& e) {
    return startup_failure(std::string{"webhooks.ca_file: "} + e.what());
  }
  cfg->send = [sender](const domain::webhook_request& r) { return sender->post(r); };
  cfg->store = s.store;
  cfg->directory = s.directory;
  cfg->rights_policy = s.directory->snapshot()->policy;
  cfg->secret_key = policy->secret_key;
  cfg->policy = policy;
  cfg->schedule_ms = *schedule;
  cfg->disable_after_ms = static_cast<std::int64_t>(disable_hours * 3600 * 1000);
  cfg->timeout_ms = section.timeout_seconds * 1000;
  cfg->concurrency = static_cast<std::size_t>(section.concurrency);
  cfg->log_size = static_cast<std::uint64_t>(section.delivery_log_size);
  cfg->leases = s.leases;
  // Several nodes: an endpoint created, changed or replayed through another node is seen within a second.
  if (s.backend->traits().shared) cfg->reload_every = std::chrono::seconds{1};
  if (s.stats) {
    cfg->attempts = s.stats->declare_counter("contentlake_webhook_attempts_total", "Webhook delivery attempts.");
    cfg->failures = s.stats->declare_counter("contentlake_webhook_failures_total",
                                             "Webhook delivery attempts that failed (a retry follows, or none is left).");
  }
  std::shared_ptr<const actors::webhook_dispatcher_config> shared = cfg;
  return std::vector<actors::child_spec>{actors::supervised<actors::webhook_dispatcher_actor>(
    "webhook-dispatcher", [shared](caf::actor_system& sys) { return sys.spawn(actors::webhook_dispatcher, shared); })};
}

}  // namespace

void register_webhooks(registry& r) {
  const char* read = "webhooks.read";
  const char* write = "webhooks.write";
  r.add_routes({
    {"POST", "/v0/content-lake/webhooks", write, &actors::plan_create_webhook, nullptr},
    {"GET", "/v0/content-lake/webhooks", read, &actors::plan_list_webhooks, nullptr},
    {"GET", "/v0/content-lake/webhooks/{id}", read, &actors::plan_get_webhook, nullptr},
    {"PATCH", "/v0/content-lake/webhooks/{id}", write, &actors::plan_update_webhook, nullptr},
    {"DELETE", "/v0/content-lake/webhooks/{id}", write, &actors::plan_delete_webhook, nullptr},
    {"POST", "/v0/content-lake/webhooks/{id}/rotate-secret", write, &actors::plan_rotate_webhook_secret, nullptr},
    {"POST", "/v0/content-lake/webhooks/{id}/test", write, &actors::plan_test_webhook, nullptr},
    {"GET", "/v0/content-lake/webhooks/{id}/deliveries", read, &actors::plan_list_webhook_deliveries, nullptr},
    {"POST", "/v0/content-lake/webhooks/{id}/replay", write, &actors::plan_replay_webhook, nullptr},
  });
  r.add_options({
    {"webhooks.https_only", "true", "Webhook URLs must be https (false allows plain http too, for tests on one machine).",
     config::boolean_member(&webhooks_settings::https_only)},
    {"webhooks.allowed_networks", "",
     "CIDR networks deliveries may reach although the address policy refuses them (loopback, private, link-local, "
     "CGNAT, reserved), separated by commas; empty: none.",
     config::text_member(&webhooks_settings::allowed_networks)},
    {"webhooks.retry_schedule_seconds", "5,300,1800,7200,18000,36000,36000",
     "The delays after each failed attempt (the first attempt is immediate), with a tenth of jitter; after the last, "
     "the message is abandoned.",
     config::text_member(&webhooks_settings::retry_schedule_seconds)},
    {"webhooks.disable_after_hours", "120",
     "An endpoint whose every attempt failed for this long is disabled (decimals allowed).",
     config::text_member(&webhooks_settings::disable_after_hours)},
    {"webhooks.timeout_seconds", "10", "One delivery attempt, from resolving the name to the answer's header.",
     config::integer_member(&webhooks_settings::timeout_seconds, 1, 60)},
    {"webhooks.concurrency", "16", "Delivery attempts in flight at once (each on a worker thread of its own).",
     config::integer_member(&webhooks_settings::concurrency, 1, 256)},
    {"webhooks.keep_alive_seconds", "30",
     "How long a delivery connection is kept for the endpoint's next messages after its name was resolved and "
     "checked (then resolved again); 0: a connection per attempt.",
     config::integer_member(&webhooks_settings::keep_alive_seconds, 0, 3600)},
    {"webhooks.delivery_log_size", "1000", "Delivery-log entries kept per endpoint (the oldest go first).",
     config::integer_member(&webhooks_settings::delivery_log_size, 10, 100000)},
    {"webhooks.rotation_overlap_hours", "24",
     "After a secret rotation, how long the previous secret still signs beside the new one.",
     config::integer_member(&webhooks_settings::rotation_overlap_hours, 0, 720)},
    {"webhooks.max_per_owner", "50", "Webhooks one principal may own.",
     config::integer_member(&webhooks_settings::max_per_owner, 1, 1000)},
    {"webhooks.ca_file", "", "Extra CA certificates (PEM) deliveries trust besides the system's; empty: none.",
     config::text_member(&webhooks_settings::ca_file)},
  });
  r.add_actors("webhooks", &spawn_webhooks);
}

}  // namespace cl::app
