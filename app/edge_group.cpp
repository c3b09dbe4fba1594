// Route group: edge (issue 29, part 3). No routes: an actor that follows the change log and
// purges the edge caches in front of the service (deploy/edge/: Varnish with xkey) of the answers
// each change makes stale. Reads carry the keys (`xkey`, `Surrogate-Key`: actors/plan_support).

#include "actors/events/edge_purger.hpp"
#include "actors/metrics.hpp"
#include "app/groups.hpp"
#include "config/watched_file.hpp"
#include "http/purge_client.hpp"
#include "storage/identity.hpp"

#include <caf/actor_system.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>

namespace cl::app {

namespace {

struct edge_settings {
  std::string purge_urls;
  std::string purge_secret_file;
  bool soft_purge_edits = true;
  std::int64_t purge_timeout_seconds = 5;
  std::int64_t give_up_after_seconds = 3600;
  std::int64_t repeat_after_ms = 1000;
};

/// The secret in `path`, without a trailing line break; empty when unreadable or empty.
std::string secret_in(const std::string& path) {
  auto text = config::read_file(path).value_or("");
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

caf::expected<std::vector<actors::child_spec>> spawn_edge(const startup& s) {
  if (!s.store) return startup_failure("the edge purger needs the record store");
  const auto& section = s.settings.groups.get<edge_settings>();
  auto cfg = std::make_shared<actors::edge_purger_config>();
  cfg->store = s.store;
  cfg->directory = s.directory;
  for (const auto& url : config::comma_list(section.purge_urls)) {
    auto parsed = domain::parse_purge_url(url);
    if (auto* why = std::get_if<std::string>(&parsed))
      return startup_failure("edge.purge_urls: \"" + url.substr(0, 100) + "\": " + *why);
    auto& t = std::get<domain::purge_target>(parsed);
    cfg->edge_names.push_back(t.host + ":" + t.port);
    cfg->edges.push_back(std::move(t));
  }
  if (!cfg->edges.empty()) {
    if (section.purge_secret_file.empty()) {
      try {
        cfg->secret = storage::load_or_create_text_secret(secrets_of(s.settings), "edge-purge-secret");
      } catch (const std::exception& e) {
        return startup_failure(std::string{"edge: "} + e.what());
      }
    } else {
      cfg->secret = secret_in(section.purge_secret_file);
      if (cfg->secret.empty())
        return startup_failure("edge.purge_secret_file: " + section.purge_secret_file + " is missing or empty");
    }
  }
  cfg->soft_edits = section.soft_purge_edits;
  cfg->timeout_ms = section.purge_timeout_seconds * 1000;
  cfg->give_up_after = std::chrono::seconds{section.give_up_after_seconds};
  cfg->repeat_after = std::chrono::milliseconds{section.repeat_after_ms};
  // The consumer position is written as often as retention is checked, at most once a minute.
  auto retention_ms = s.settings.storage.change_log_retention_seconds * 1000;
  cfg->acknowledge_every = std::chrono::milliseconds{std::clamp<std::int64_t>(retention_ms / 4, 100, 60000)};
  cfg->send = [](const domain::purge_request& r) { return http::send_purge(r); };
  cfg->leases = s.leases;
  if (s.stats) {
    cfg->lag_seconds = s.stats->declare_gauge("contentlake_edge_purge_lag_seconds",
                                              "How old the oldest change not yet purged at every edge cache is (0: none).");
    cfg->failing_edges = s.stats->declare_gauge(
      "contentlake_edge_purge_failing_edges",
      "Edge caches whose last purge failed (0: every configured edge answered its last purge; deploy/edge/run waits "
      "for it).");
    cfg->purges = s.stats->declare_counter("contentlake_edge_purges_total", "Purge requests sent to edge caches.");
    cfg->failures = s.stats->declare_counter("contentlake_edge_purge_failures_total",
                                             "Purge requests that failed (retried with backoff).");
  }
  std::shared_ptr<const actors::edge_purger_config> shared = cfg;
  return std::vector<actors::child_spec>{actors::supervised<actors::edge_purger_actor>(
    "edge-purger", [shared](caf::actor_system& sys) { return sys.spawn<caf::detached>(actors::edge_purger, shared); })};
}

}  // namespace

void register_edge(registry& r) {
  r.add_options({
    {"edge.purge_urls", "",
     "Edge caches to purge, as http:// URLs separated by commas (e.g. http://127.0.0.1:6081/); empty: none.",
     config::text_member(&edge_settings::purge_urls)},
    {"edge.purge_secret_file", "",
     "A file holding the secret purges carry in X-Purge-Secret; empty: <data_dir>/identity/edge-purge-secret, "
     "created at the first start with edges.",
     config::text_member(&edge_settings::purge_secret_file)},
    {"edge.soft_purge_edits", "true",
     "Edits (a Resource or Work written) purge soft: the edge revalidates its copy with the service before serving it "
     "again. Rights, grants and promotions always purge hard.",
     config::boolean_member(&edge_settings::soft_purge_edits)},
    {"edge.purge_timeout_seconds", "5", "One purge request, from resolving the edge's name to its answer.",
     config::integer_member(&edge_settings::purge_timeout_seconds, 1, 60)},
    {"edge.give_up_after_seconds", "3600",
     "An edge failing for this long stops holding the change log back; it is purged of everything when it answers.",
     config::integer_member(&edge_settings::give_up_after_seconds, 1, 7 * 24 * 3600)},
    {"edge.repeat_after_ms", "1000",
     "Every purge is sent again this much later (a read that fetched before a change and reached the edge after its "
     "purge does not survive).",
     config::integer_member(&edge_settings::repeat_after_ms, 100, 60000)},
  });
  r.add_actors("edge", &spawn_edge);
}

}  // namespace cl::app
