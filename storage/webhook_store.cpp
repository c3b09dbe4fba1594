#include "storage/webhook_store.hpp"

#include "storage/every_record.hpp"
#include "storage/json_record.hpp"
#include "storage/record_store.hpp"
#include "storage/record_codecs.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <limits>

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

namespace {

constexpr std::size_t page_size = copy_page_size;

std::string endpoint_text(const webhook_record& w) { return position_text({w.tenant, w.id}); }

/// An endpoint's whole delivery log, oldest first.
std::vector<webhook_delivery> delivery_log(const read_view& v, const webhook_record& w) {
  std::vector<webhook_delivery> out;
  std::uint64_t before = 0;
  for (;;) {
    auto page = webhooks(v).deliveries(w.tenant, w.id, before, page_size);
    if (page.empty()) break;
    before = page.back().number;
    out.insert(out.end(), page.begin(), page.end());
    if (page.size() < page_size) break;
  }
  return {out.rbegin(), out.rend()};
}

std::string retry_text(const webhook_retry& r) {
  return copy_position::join({std::to_string(r.due_ms), r.tenant, r.webhook_id, r.message_id});
}

/// The messages waiting after the one `after` names (empty: from the soonest), a page of them.
std::vector<webhook_retry> retries_after(const read_view& v, const std::string& after) {
  webhook_retry last;
  if (!after.empty()) {
    last.due_ms = std::stoll(copy_position::part(after, 0));
    last.tenant = copy_position::part(after, 1);
    last.webhook_id = copy_position::part(after, 2);
    last.message_id = copy_position::part(after, 3);
  }
  return webhooks(v).due(std::numeric_limits<std::int64_t>::max(), page_size, after.empty() ? nullptr : &last);
}

}  // namespace

std::vector<record_kind> webhook_reads::record_kinds() const {
  // An endpoint is copied with its delivery log; the messages waiting for a retry after them. The
  // waiting messages are compared by their keys (due time, endpoint, message) on both sides.
  return {{"webhooks", 80,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto ws = every_record(from).webhooks(position_from_text(after), page_size);
             for (const auto& w : ws)
               page.writes.push_back([w, log = delivery_log(from, w)](write_txn& tx) {
                 webhooks(tx).put(w);
                 for (const auto& d : log) webhooks(tx).log_delivery(d, 0);
               });
             return finished(std::move(page), ws, endpoint_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(every_record(s).webhooks(position_from_text(after), page_size), endpoint_text);
           },
           [](const read_view& s, const std::string& key) -> std::optional<std::string> {
             auto p = position_from_text(key);
             auto w = webhooks(s).get(p.tenant, p.id);
             if (!w) return std::nullopt;
             return w->url + "|" + w->secret_sealed + "|" + std::to_string(w->cursor) + "|"
                    + std::to_string(delivery_log(s, *w).size());
           }},
          {"webhook_retries", 80,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto rs = retries_after(from, after);
             for (const auto& r : rs) page.writes.push_back([r](write_txn& tx) { webhooks(tx).schedule(r); });
             return finished(std::move(page), rs, retry_text);
           },
           [](const read_view& s, const std::string& after) { return keys_of(retries_after(s, after), retry_text); },
           nullptr}};
}

}  // namespace cl::storage
