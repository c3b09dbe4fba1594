#include "storage/webhook_store.hpp"

#include "storage/encoding.hpp"
#include "storage/record_codecs.hpp"
#include "storage/kv/kv.hpp"


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

class kv_webhook_store final : public webhook_writes {
public:
  explicit kv_webhook_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<webhook_record> get(std::string_view tenant, std::string_view id) const override {
    require_storable({tenant, id});
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
    require_storable({w.tenant, w.id, w.owner, w.client_id, w.url, w.description});
    auto key = tenant_key(w.tenant, w.id);
    if (auto before = get(w.tenant, w.id); before && before->owner != w.owner)
      w_->erase(tables::webhook_owners, tenant_key(w.tenant, before->owner + '\0' + w.id));
    w_->put(tables::webhooks, key, encode_webhook(w));
    w_->put(tables::webhook_owners, tenant_key(w.tenant, w.owner + '\0' + w.id), "");
    if (w.enabled)
      w_->put(tables::webhook_enabled, key, "");
    else
      w_->erase(tables::webhook_enabled, key);
  }

  void erase(std::string_view tenant, std::string_view id) override {
    require_storable({tenant, id});
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

  void schedule(const webhook_retry& r) override { w_->put(tables::webhook_retries, retry_key(r), encode_retry(r)); }

  void unschedule(const webhook_retry& r) override { w_->erase(tables::webhook_retries, retry_key(r)); }

  void log_delivery(const webhook_delivery& d, std::uint64_t keep) override {
    auto prefix = delivery_prefix(d.tenant, d.webhook_id);
    w_->put(tables::webhook_deliveries, prefix + big_endian_key(~d.number), encode_delivery(d));
    if (keep > 0 && d.number > keep) w_->erase(tables::webhook_deliveries, prefix + big_endian_key(~(d.number - keep)));
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

}  // namespace

const bool implemented = kv::implement<webhook_writes, kv_webhook_store>();

}  // namespace cl::storage
