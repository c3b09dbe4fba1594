#include "actors/changes_plans.hpp"

#include "actors/changes_feed.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_support.hpp"
#include "domain/json_text.hpp"
#include "domain/records.hpp"

#include <algorithm>

namespace cl::actors {

namespace {

constexpr std::size_t default_page_size = 100;
constexpr std::size_t max_page_size = 1000;
/// A long poll waits at most this long (the route's deadline leaves it room: app/changes_group.cpp).
constexpr std::int64_t max_wait_seconds = 30;

std::string event_json(const change_event& e) {
  auto text_or_null = [](const std::string& s) { return s.empty() ? std::string{"null"} : domain::json_string(s); };
  return "{\"id\":" + domain::json_string(e.id) + ",\"type\":" + domain::json_string(e.type) + ",\"" + e.subject
         + "\":" + domain::json_string(e.subject_id) + ",\"version\":" + text_or_null(e.version)
         + ",\"hash\":" + text_or_null(e.hash) + ",\"occurred_at\":" + domain::json_string(domain::iso8601_at_ms(e.at_ms))
         + ",\"transaction\":" + text_or_null(e.transaction) + "}";
}

/// `types`: comma-separated event types the feed knows; empty: all.
std::variant<std::vector<std::string>, domain::api_reply> types_of(const std::string& raw) {
  std::vector<std::string> types;
  if (raw.empty()) return types;
  std::size_t start = 0;
  while (start <= raw.size()) {
    auto end = std::min(raw.find(',', start), raw.size());
    auto type = raw.substr(start, end - start);
    const auto& known = change_event_types();
    if (std::find(known.begin(), known.end(), type) == known.end())
      return invalid_field("types", "must be event types separated by commas (docs/api.md, Events); "
                                    + (type.empty() ? std::string{"an empty one"} : "not " + type.substr(0, 64)));
    types.push_back(std::move(type));
    start = end + 1;
  }
  return types;
}

}  // namespace

void plan_changes(caf::event_based_actor* self, std::shared_ptr<const request_context> ctx, reply_fn done) {
  // Events are thin already: no field mask applies (as on the list routes).
  if (!query_param(ctx->request.query, "fields").empty())
    return done(domain::api_reply::failure(domain::error_id::invalid_argument, "fields is not supported on the change feed.",
                                           {{"fields", "not supported on list routes"}}));
  auto poll = std::make_shared<changes_poll>();
  poll->tenant = ctx->who.tenant_id;
  poll->since = query_param(ctx->request.query, "since");
  auto types = types_of(query_param(ctx->request.query, "types"));
  if (auto* refusal = std::get_if<domain::api_reply>(&types)) return done(std::move(*refusal));
  poll->types = std::get<std::vector<std::string>>(std::move(types));
  poll->page_size = default_page_size;
  if (auto raw = query_param(ctx->request.query, "page_size"); !raw.empty()) {
    auto n = positive(raw);
    if (!n || *n > static_cast<std::int64_t>(max_page_size))
      return done(invalid_field("page_size", "must be a whole number from 1 to 1000"));
    poll->page_size = static_cast<std::size_t>(*n);
  }
  if (auto raw = query_param(ctx->request.query, "wait"); !raw.empty()) {
    auto n = raw == "0" ? std::optional<std::int64_t>{0} : positive(raw);
    if (!n || *n > max_wait_seconds) return done(invalid_field("wait", "must be a whole number of seconds from 0 to 30"));
    poll->wait_ms = *n * 1000;
  }
  with_principals(
    self, ctx,
    [self, ctx, done, poll](std::vector<std::string> principals) {
      poll->principals = std::move(principals);
      ask(
        self, *ctx, done, ctx->actors->get<changes_actor>(), "change feed",
        [done](changes_page& page) {
          if (page.error) return done(domain::api_reply::from(std::move(*page.error)));
          std::string body = "{\"events\":[";
          for (std::size_t i = 0; i < page.events.size(); ++i) body += (i ? "," : "") + event_json(page.events[i]);
          body += "],\"next_cursor\":" + domain::json_string(page.next_cursor) + "}";
          auto r = json_reply(200, std::move(body));
          r.headers.emplace_back("Cache-Control", "no-store");
          done(std::move(r));
        },
        changes_atom_v, *poll);
    },
    done);
}

}  // namespace cl::actors
