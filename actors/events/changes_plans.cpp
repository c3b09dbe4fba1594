#include "actors/events/changes_plans.hpp"

#include "actors/events/changes_feed.hpp"
#include "actors/plan_access.hpp"
#include "actors/plan_body.hpp"
#include "actors/plan_support.hpp"
#include "domain/clock.hpp"
#include "domain/json_text.hpp"
#include "domain/negotiation.hpp"
#include "domain/records.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <utility>

namespace cl::actors {

namespace {

constexpr std::size_t default_page_size = 100;
constexpr std::size_t max_page_size = 1000;
/// A long poll waits at most this long (the route's deadline leaves it room: app/changes_group.cpp).
constexpr std::int64_t max_wait_seconds = 30;

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

/// A heartbeat at least this often on an event stream (a comment and the cursor so far).
constexpr std::int64_t heartbeat_ms = 15000;

/// An event stream (`Accept: text/event-stream`): long polls of the feed actor, one after the
/// other, each answer written as frames as it comes; `id:` is the cursor after each event, and a
/// block with only `id:` moves a client's `Last-Event-ID` past what it scanned without an event.
/// Each wait lasts at most a heartbeat; the stream ends after `changes.stream_seconds` (the client
/// reconnects with `Last-Event-ID`), at a `reset` event when the cursor fell out of retention, or
/// when the service drains.
class event_stream : public std::enable_shared_from_this<event_stream> {
public:
  /// A stream whose first poll answered `first` (with the stream's held slot), for a token that
  /// expires at Unix second `token_expires`.
  event_stream(caf::actor_system& sys, changes_actor feed, changes_poll poll, changes_page first,
               std::int64_t token_expires)
      : sys_(&sys), feed_(caf::actor_cast<caf::weak_actor_ptr>(feed)), poll_(std::move(poll)), first_(std::move(first)) {
    poll_.cursor_per_event = true;
    poll_.opens_stream = false;
    auto left_ms = token_expires * 1000 - domain::now_ms();
    token_end_ = std::chrono::steady_clock::now() + std::chrono::milliseconds{std::max<std::int64_t>(left_ms, 0)};
  }

  void next(std::function<void(std::optional<std::string>)> give) {
    if (first_) {  // the opening poll's page: the stream starts with it
      auto page = std::move(*first_);
      first_.reset();
      return give(frames(page));
    }
    auto now = std::chrono::steady_clock::now();
    if (ended_ || now >= end_) return give(std::nullopt);
    if (now >= token_end_) {
      // Grants are checked per event, but the token itself has run out: the stream ends and says
      // why, so the client reconnects with a fresh token and its last id.
      ended_ = true;
      return give("event: token_expired\ndata: "
                  + domain::render_error_body(domain::api_error{domain::error_id::token_expired,
                                                                "The token expired; reconnect with a fresh one and "
                                                                "Last-Event-ID.", {}})
                  + "\n\n");
    }
    auto until = std::min(end_, token_end_);
    poll_.wait_ms = std::min<std::int64_t>(heartbeat_ms,
                                           std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count());
    auto self = shared_from_this();
    sys_->spawn([self, give = std::move(give)](caf::event_based_actor* asker) {
      // The feed answers, fails, or goes away (stopped, or killed and restarted: then the stream
      // ends at once and its client reconnects, rather than waiting out the request's timeout and
      // holding a stopping service up that long).
      auto answered = std::make_shared<bool>(false);
      auto end = [self, give, asker, answered] {
        if (std::exchange(*answered, true)) return;
        self->ended_ = true;
        give(std::nullopt);
        asker->quit();
      };
      // The stream holds the feed weakly (a stream left open must not keep a stopped feed alive: a
      // detached feed's thread waits for its last reference); the asker holds it for its one poll.
      auto feed = caf::actor_cast<changes_actor>(self->feed_.lock());
      if (!feed) return end();
      asker->set_down_handler([end](caf::down_msg&) { end(); });
      asker->monitor(feed);
      asker->request(feed, std::chrono::milliseconds{heartbeat_ms + 10000}, changes_atom_v, self->poll_)
        .then(
          [self, give, asker, answered](changes_page& page) {
            if (std::exchange(*answered, true)) return;
            give(self->frames(page));
            asker->quit();
          },
          [end](caf::error&) { end(); });
    });
  }

private:
  std::string frames(changes_page& page) {
    std::string out;
    if (page.slot) slot_ = std::move(page.slot);
    if (!started_) {
      started_ = true;
      end_ = std::chrono::steady_clock::now() + std::chrono::milliseconds{page.stream_ms};
      out = "retry: 1000\n\n";
    }
    if (page.error) {
      ended_ = true;
      return out + "event: " + (page.error->id == domain::error_id::cursor_expired ? "reset" : "error") + "\ndata: "
             + domain::render_error_body(*page.error) + "\n\n";
    }
    for (const auto& e : page.events) out += "id: " + e.cursor + "\ndata: " + change_event_json(e) + "\n\n";
    if (page.events.empty()) out += ": heartbeat\n";
    out += "id: " + page.next_cursor + "\n\n";
    poll_.since = page.next_cursor;
    if (page.closing) ended_ = true;
    return out;
  }

  caf::actor_system* sys_;
  caf::weak_actor_ptr feed_;  ///< weak: see next()
  changes_poll poll_;
  std::optional<changes_page> first_;  ///< the opening poll's page, until it is written
  std::shared_ptr<const void> slot_;   ///< the held slot, while the stream lasts
  bool started_ = false, ended_ = false;
  std::chrono::steady_clock::time_point end_, token_end_;
};

/// True when the caller names `text/event-stream` in `Accept` and prefers it to JSON (no Accept, or
/// `*/*`, is JSON).
bool wants_stream(const std::string& accept) {
  std::string lower = accept;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("text/event-stream") == std::string::npos) return false;
  auto stream = domain::quality_of(accept, "text/event-stream");
  return stream > 0 && stream >= domain::quality_of(accept, "application/json");
}

}  // namespace

void plan_changes(const plan_run& run) {
  // Events are thin already: no field mask applies (as on the list routes).
  if (!query_param(run->request.query, "fields").empty())
    return run.answer(domain::api_reply::failure(domain::error_id::invalid_argument,
                                                 "fields is not supported on the change feed.",
                                                 {{"fields", "not supported on list routes"}}));
  auto poll = std::make_shared<changes_poll>();
  poll->tenant = run->who.tenant_id;
  poll->since = query_param(run->request.query, "since");
  auto types = types_of(query_param(run->request.query, "types"));
  if (auto* refusal = std::get_if<domain::api_reply>(&types)) return run.answer(std::move(*refusal));
  poll->types = std::get<std::vector<std::string>>(std::move(types));
  poll->page_size = default_page_size;
  if (auto raw = query_param(run->request.query, "page_size"); !raw.empty()) {
    auto n = positive(raw);
    if (!n || *n > static_cast<std::int64_t>(max_page_size))
      return run.answer(invalid_field("page_size", "must be a whole number from 1 to 1000"));
    poll->page_size = static_cast<std::size_t>(*n);
  }
  if (auto raw = query_param(run->request.query, "wait"); !raw.empty()) {
    auto n = raw == "0" ? std::optional<std::int64_t>{0} : positive(raw);
    if (!n || *n > max_wait_seconds)
      return run.answer(invalid_field("wait", "must be a whole number of seconds from 0 to 30"));
    poll->wait_ms = *n * 1000;
  }
  bool stream = wants_stream(run->request.accept);
  if (!stream)
    if (auto refusal = domain::refuse_unless_json(run->request.accept))
      return run.answer(domain::api_reply::from(std::move(*refusal)));
  if (stream && !run->request.last_event_id.empty())
    poll->since = run->request.last_event_id;  // a reconnection resumes
  // What holds a request open counts against its principal and client (changes.max_held_*), ends
  // when the client leaves, and never outlives the token.
  poll->holder = run->who.tenant_id + '\0' + run->who.subject;
  poll->client = run->who.client_id;
  poll->peer_gone = run->request.peer_gone;
  poll->opens_stream = stream;
  poll->cursor_per_event = stream;  // the opening page's events carry their `id:` like every later one
  poll->wait_ms
    = std::min<std::int64_t>(poll->wait_ms, std::max<std::int64_t>(run->who.expires_at * 1000 - domain::now_ms(), 0));
  with_principals(
    run, [run, poll, stream](std::vector<std::string> principals) {
      poll->principals = std::move(principals);
      ask(
        run, run->actors->get<changes_actor>(), "change feed",
        [run, poll, stream](changes_page& page) {
          // Past a held limit, 429 or 503 before any byte of a stream; a stream's other errors
          // (a cursor that does not open) are events of the stream.
          bool over = page.error && (page.error->id == domain::error_id::too_many_held_requests
                                     || page.error->id == domain::error_id::server_overloaded);
          if (page.error && (over || !stream)) {
            auto refused = domain::api_reply::from(std::move(*page.error));
            if (over) refused.retry_after_seconds = 5;  // one of the held streams or long polls may end meanwhile
            return run.answer(std::move(refused));
          }
          if (stream) {
            auto source = std::make_shared<event_stream>(run.self()->system(), run->actors->get<changes_actor>(), *poll,
                                                         std::move(page), run->who.expires_at);
            domain::api_reply r;
            r.content_type = "text/event-stream";
            r.headers.emplace_back("Cache-Control", "no-cache, no-transform");
            r.headers.emplace_back("X-Accel-Buffering", "no");
            r.next_chunk_async = [source](std::function<void(std::optional<std::string>)> give) {
              source->next(std::move(give));
            };
            return run.answer(std::move(r));
          }
          std::string body = "{\"events\":[";
          for (std::size_t i = 0; i < page.events.size(); ++i)
            body += (i ? "," : "") + change_event_json(page.events[i]);
          body += "],\"next_cursor\":" + domain::json_string(page.next_cursor) + "}";
          auto r = json_reply(200, std::move(body));
          r.headers.emplace_back("Cache-Control", "no-store");
          run.answer(std::move(r));
        },
        changes_atom_v, *poll);
    });
}

}  // namespace cl::actors
