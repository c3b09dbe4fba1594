#include "storage/webhook_store.hpp"

#include "storage/json_record.hpp"
#include "storage/record_codecs.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace cl::storage {

namespace json = boost::json;

bool webhook_record::operator==(const webhook_record& o) const {
  return tenant == o.tenant && id == o.id && owner == o.owner && client_id == o.client_id && url == o.url
         && event_types == o.event_types && description == o.description && enabled == o.enabled && max_in_flight == o.max_in_flight
         && disabled_reason == o.disabled_reason && secret_sealed == o.secret_sealed
         && previous_secret_sealed == o.previous_secret_sealed && previous_until_ms == o.previous_until_ms
         && created == o.created && updated == o.updated && cursor == o.cursor && failing_since_ms == o.failing_since_ms
         && log_next == o.log_next && replay_next == o.replay_next && replay_last == o.replay_last
         && cursor_within == o.cursor_within && replay_within == o.replay_within;
}

std::string webhook_reads::resume_key(const webhook_record& w) {
  std::string key{w.tenant};
  key.push_back('\0');
  return key.append(w.id);
}

using json_record::number;
using json_record::text;

std::string encode_webhook(const webhook_record& w) {
  json::array types;
  for (const auto& t : w.event_types) types.emplace_back(t);
  return json::serialize(json::object{
    {"tenant", w.tenant}, {"id", w.id}, {"owner", w.owner}, {"client_id", w.client_id}, {"url", w.url},
    {"event_types", std::move(types)}, {"description", w.description}, {"enabled", w.enabled},
    {"max_in_flight", w.max_in_flight}, {"disabled_reason", w.disabled_reason}, {"secret", w.secret_sealed}, {"previous_secret", w.previous_secret_sealed},
    {"previous_until_ms", w.previous_until_ms}, {"created", w.created}, {"updated", w.updated}, {"cursor", w.cursor},
    {"failing_since_ms", w.failing_since_ms}, {"log_next", w.log_next}, {"replay_next", w.replay_next},
    {"replay_last", w.replay_last}, {"cursor_within", w.cursor_within}, {"replay_within", w.replay_within}});
}

webhook_record decode_webhook(std::string_view stored) {
  auto o = json::parse(stored).as_object();
  webhook_record w;
  w.tenant = text(o, "tenant");
  w.id = text(o, "id");
  w.owner = text(o, "owner");
  w.client_id = text(o, "client_id");
  w.url = text(o, "url");
  if (auto* types = o.if_contains("event_types"); types && types->is_array())
    for (const auto& t : types->as_array())
      if (t.is_string()) w.event_types.emplace_back(t.as_string());
  w.description = text(o, "description");
  w.enabled = o.contains("enabled") && o.at("enabled").is_bool() && o.at("enabled").as_bool();
  w.max_in_flight = std::max<std::int32_t>(1, number<std::int32_t>(o, "max_in_flight"));  // 1 before it existed
  w.disabled_reason = text(o, "disabled_reason");
  w.secret_sealed = text(o, "secret");
  w.previous_secret_sealed = text(o, "previous_secret");
  w.previous_until_ms = number<std::int64_t>(o, "previous_until_ms");
  w.created = text(o, "created");
  w.updated = text(o, "updated");
  w.cursor = number<std::uint64_t>(o, "cursor");
  w.failing_since_ms = number<std::int64_t>(o, "failing_since_ms");
  w.log_next = number<std::uint64_t>(o, "log_next");
  w.replay_next = number<std::uint64_t>(o, "replay_next");
  w.replay_last = number<std::uint64_t>(o, "replay_last");
  w.cursor_within = text(o, "cursor_within");
  w.replay_within = text(o, "replay_within");
  return w;
}

std::string encode_retry(const webhook_retry& r) {
  return json::serialize(json::object{{"tenant", r.tenant},         {"webhook_id", r.webhook_id},
                                      {"message_id", r.message_id}, {"event_type", r.event_type},
                                      {"resource_id", r.resource_id}, {"body", r.body},
                                      {"seq", r.seq},               {"attempts", r.attempts},
                                      {"due_ms", r.due_ms}});
}

webhook_retry decode_retry(std::string_view stored) {
  auto o = json::parse(stored).as_object();
  webhook_retry r;
  r.tenant = text(o, "tenant");
  r.webhook_id = text(o, "webhook_id");
  r.message_id = text(o, "message_id");
  r.event_type = text(o, "event_type");
  r.resource_id = text(o, "resource_id");
  r.body = text(o, "body");
  r.seq = number<std::uint64_t>(o, "seq");
  r.attempts = number<std::int32_t>(o, "attempts");
  r.due_ms = number<std::int64_t>(o, "due_ms");
  return r;
}

std::string encode_delivery(const webhook_delivery& d) {
  return json::serialize(json::object{
    {"tenant", d.tenant}, {"webhook_id", d.webhook_id}, {"number", d.number}, {"message_id", d.message_id},
    {"event_type", d.event_type}, {"seq", d.seq}, {"attempt", d.attempt}, {"at_ms", d.at_ms}, {"status", d.status},
    {"latency_ms", d.latency_ms}, {"outcome", d.outcome}, {"error", d.error}, {"next_attempt_ms", d.next_attempt_ms}});
}

webhook_delivery decode_delivery(std::string_view stored) {
  auto o = json::parse(stored).as_object();
  webhook_delivery d;
  d.tenant = text(o, "tenant");
  d.webhook_id = text(o, "webhook_id");
  d.number = number<std::uint64_t>(o, "number");
  d.message_id = text(o, "message_id");
  d.event_type = text(o, "event_type");
  d.seq = number<std::uint64_t>(o, "seq");
  d.attempt = number<std::int32_t>(o, "attempt");
  d.at_ms = number<std::int64_t>(o, "at_ms");
  d.status = number<std::int32_t>(o, "status");
  d.latency_ms = number<std::int64_t>(o, "latency_ms");
  d.outcome = text(o, "outcome");
  d.error = text(o, "error");
  d.next_attempt_ms = number<std::int64_t>(o, "next_attempt_ms");
  return d;
}

}  // namespace cl::storage
