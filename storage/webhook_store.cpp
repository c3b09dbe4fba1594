#include "storage/webhook_store.hpp"

#include "storage/encoding.hpp"
#include "storage/json_record.hpp"
#include "storage/kv.hpp"

#include <boost/json.hpp>

namespace cl::storage {

using kv::big_endian_key;
using kv::tenant_key;

namespace tables {
const kv::table webhooks = kv::declare_table("webhooks");
const kv::table webhook_owners = kv::declare_table("webhook_owners");
const kv::table webhook_enabled = kv::declare_table("webhook_enabled");
const kv::table webhook_retries = kv::declare_table("webhook_retries");
const kv::table webhook_deliveries = kv::declare_table("webhook_deliveries");
}  // namespace tables

namespace json = boost::json;

bool webhook_record::operator==(const webhook_record& o) const {
  return tenant == o.tenant && id == o.id && owner == o.owner && client_id == o.client_id && url == o.url
         && event_types == o.event_types && description == o.description && enabled == o.enabled
         && disabled_reason == o.disabled_reason && secret_sealed == o.secret_sealed
         && previous_secret_sealed == o.previous_secret_sealed && previous_until_ms == o.previous_until_ms
         && created == o.created && updated == o.updated && cursor == o.cursor && failing_since_ms == o.failing_since_ms
         && log_next == o.log_next && replay_next == o.replay_next && replay_last == o.replay_last
         && cursor_within == o.cursor_within && replay_within == o.replay_within;
}

std::string webhook_reads::resume_key(const webhook_record& w) {
  return tenant_key(w.tenant, w.id);
}

namespace {

/// Key layouts: `webhooks` tenant\0id -> record; `webhook_owners` tenant\0owner\0id -> "";
/// `webhook_enabled` tenant\0id -> "" (enabled ones); `webhook_retries` <8-byte due>
/// tenant\0webhook\0message -> retry; `webhook_deliveries` tenant\0webhook\0<8-byte ~number> ->
/// entry (newest first). Values are JSON objects.
std::string retry_key(const webhook_retry& r) {
  return big_endian_key(static_cast<std::uint64_t>(r.due_ms)) + tenant_key(r.tenant, r.webhook_id + '\0' + r.message_id);
}

std::string delivery_prefix(std::string_view tenant, std::string_view id) {
  return tenant_key(tenant, std::string{id} + '\0');
}

using json_record::number;
using json_record::text;

std::string encode(const webhook_record& w) {
  json::array types;
  for (const auto& t : w.event_types) types.emplace_back(t);
  return json::serialize(json::object{
    {"tenant", w.tenant}, {"id", w.id}, {"owner", w.owner}, {"client_id", w.client_id}, {"url", w.url},
    {"event_types", std::move(types)}, {"description", w.description}, {"enabled", w.enabled},
    {"disabled_reason", w.disabled_reason}, {"secret", w.secret_sealed}, {"previous_secret", w.previous_secret_sealed},
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

std::string encode(const webhook_retry& r) {
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

std::string encode(const webhook_delivery& d) {
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

class kv_webhook_store final : public webhook_writes {
public:
  explicit kv_webhook_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<webhook_record> get(std::string_view tenant, std::string_view id) const override {
    auto stored = r_.get(tables::webhooks, tenant_key(tenant, id));
    if (!stored) return std::nullopt;
    return decode_webhook(*stored);
  }

  std::vector<webhook_record> owned(std::string_view tenant, std::string_view owner, std::string_view after,
                                    std::size_t limit) const override {
    auto prefix = tenant_key(tenant, std::string{owner} + '\0');
    std::vector<webhook_record> out;
    for (auto& [key, unused] : r_.scan(tables::webhook_owners, prefix, after.empty() ? "" : prefix + std::string{after},
                                       limit)) {
      if (auto w = get(tenant, std::string_view{key}.substr(prefix.size()))) out.push_back(std::move(*w));
    }
    return out;
  }

  std::vector<webhook_record> enabled(std::string_view after, std::size_t limit) const override {
    std::vector<webhook_record> out;
    for (auto& [key, unused] : r_.scan(tables::webhook_enabled, "", after, limit))
      if (auto stored = r_.get(tables::webhooks, key)) out.push_back(decode_webhook(*stored));
    return out;
  }

  std::vector<webhook_retry> due(std::int64_t now_ms, std::size_t limit, const webhook_retry* after) const override {
    std::vector<webhook_retry> out;
    for (auto& [key, value] : r_.scan(tables::webhook_retries, "", after ? retry_key(*after) : std::string{}, limit)) {
      if (static_cast<std::int64_t>(encoding::get_u64(key)) > now_ms) break;
      out.push_back(decode_retry(value));
    }
    return out;
  }

  std::optional<std::int64_t> next_due() const override {
    auto first = r_.scan(tables::webhook_retries, "", "", 1);
    if (first.empty()) return std::nullopt;
    return static_cast<std::int64_t>(encoding::get_u64(first.front().first));
  }

  std::vector<webhook_delivery> deliveries(std::string_view tenant, std::string_view id, std::uint64_t before,
                                           std::size_t limit) const override {
    auto prefix = delivery_prefix(tenant, id);
    // Keys hold ~number: "numbers below `before`" sort after ~before.
    auto after = before == 0 ? std::string{} : prefix + big_endian_key(~before);
    std::vector<webhook_delivery> out;
    for (auto& [key, value] : r_.scan(tables::webhook_deliveries, prefix, after, limit))
      out.push_back(decode_delivery(value));
    return out;
  }

  void put(const webhook_record& w) override {
    auto key = tenant_key(w.tenant, w.id);
    if (auto before = get(w.tenant, w.id); before && before->owner != w.owner)
      w_->erase(tables::webhook_owners, tenant_key(w.tenant, before->owner + '\0' + w.id));
    w_->put(tables::webhooks, key, encode(w));
    w_->put(tables::webhook_owners, tenant_key(w.tenant, w.owner + '\0' + w.id), "");
    if (w.enabled)
      w_->put(tables::webhook_enabled, key, "");
    else
      w_->erase(tables::webhook_enabled, key);
  }

  void erase(std::string_view tenant, std::string_view id) override {
    auto before = get(tenant, id);
    if (!before) return;
    auto key = tenant_key(tenant, id);
    w_->erase(tables::webhooks, key);
    w_->erase(tables::webhook_enabled, key);
    w_->erase(tables::webhook_owners, tenant_key(tenant, before->owner + '\0' + std::string{id}));
    // The log holds at most `keep` entries: erasing it costs that, whatever the tenant holds.
    auto prefix = delivery_prefix(tenant, id);
    for (;;) {
      auto rows = r_.scan(tables::webhook_deliveries, prefix, "", 256);
      if (rows.empty()) break;
      for (auto& [k, unused] : rows) w_->erase(tables::webhook_deliveries, k);
    }
  }

  void schedule(const webhook_retry& r) override { w_->put(tables::webhook_retries, retry_key(r), encode(r)); }

  void unschedule(const webhook_retry& r) override { w_->erase(tables::webhook_retries, retry_key(r)); }

  void log_delivery(const webhook_delivery& d, std::uint64_t keep) override {
    auto prefix = delivery_prefix(d.tenant, d.webhook_id);
    w_->put(tables::webhook_deliveries, prefix + big_endian_key(~d.number), encode(d));
    if (keep > 0 && d.number > keep) w_->erase(tables::webhook_deliveries, prefix + big_endian_key(~(d.number - keep)));
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

}  // namespace

const store_kind webhook_writes::kind = kv::register_store<kv_webhook_store>();

}  // namespace cl::storage
