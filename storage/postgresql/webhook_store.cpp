// Webhook endpoints, waiting retries and delivery logs in SQL: the records as the key-value stores
// keep them (JSON, storage/record_codecs.hpp) beside the columns queries use.

#include "storage/webhook_store.hpp"

#include "storage/postgresql/backend.hpp"
#include "storage/record_codecs.hpp"

namespace cl::storage::pg {

namespace {

/// The group's tables, as a schema part of its own.
const bool schema = schema_part("webhooks", {
  // 1: the store's tables.
  R"sql(
CREATE TABLE webhooks (
  tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, owner text COLLATE "C" NOT NULL,
  enabled boolean NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, id));
CREATE INDEX webhooks_by_owner ON webhooks (tenant, owner, id);
CREATE INDEX webhooks_enabled ON webhooks (tenant, id) WHERE enabled;
CREATE TABLE webhook_retries (
  due_ms bigint NOT NULL, tenant text COLLATE "C" NOT NULL, webhook_id text COLLATE "C" NOT NULL,
  message_id text COLLATE "C" NOT NULL, record text NOT NULL,
  PRIMARY KEY (due_ms, tenant, webhook_id, message_id));
CREATE TABLE webhook_deliveries (
  tenant text COLLATE "C" NOT NULL, webhook_id text COLLATE "C" NOT NULL, number bigint NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (tenant, webhook_id, number));
)sql",
});

const statement hook_get{"SELECT record FROM webhooks WHERE tenant = $1 AND id = $2"};
// In a write: the row stays this transaction's to its commit. An endpoint is read, changed and put
// back by the dispatcher (a batch's cursor, a retry's outcome) and by requests (a replay, an update),
// on any node and any writer lane: the later waits and reads what the earlier wrote, so neither
// change is lost.
const statement hook_get_locked{"SELECT record FROM webhooks WHERE tenant = $1 AND id = $2 FOR UPDATE"};
// In a write, an owner's endpoints are counted under a lock of that owner's (an advisory lock in the
// two-key space, held to the commit): two creates through two nodes or lanes cannot both find room
// under webhooks.max_per_owner. The first key names this use; the second is the owner's hash.
const statement owner_lock{"SELECT pg_advisory_xact_lock(736284, hashtext($1 || '/' || $2))"};
const statement hooks_owned{
  "SELECT record FROM webhooks WHERE tenant = $1 AND owner = $2 AND id > $3 ORDER BY id LIMIT $4"};
const statement hooks_enabled{
  "SELECT record FROM webhooks WHERE enabled AND (tenant, id) > ($1, $2) ORDER BY tenant, id LIMIT $3"};
const statement retries_due{
  "SELECT record FROM webhook_retries WHERE due_ms <= $1 AND (due_ms, tenant, webhook_id, message_id) > ($2, $3, $4, $5) "
  "ORDER BY due_ms, tenant, webhook_id, message_id LIMIT $6"};
const statement retry_soonest{"SELECT min(due_ms) FROM webhook_retries"};
const statement deliveries_page{
  "SELECT record FROM webhook_deliveries WHERE tenant = $1 AND webhook_id = $2 AND number < $3 "
  "ORDER BY number DESC LIMIT $4"};
const statement hook_upsert{
  "INSERT INTO webhooks (tenant, id, owner, enabled, record) VALUES ($1, $2, $3, $4, $5) "
  "ON CONFLICT (tenant, id) DO UPDATE SET owner = EXCLUDED.owner, enabled = EXCLUDED.enabled, record = EXCLUDED.record"};
const statement hook_delete{"DELETE FROM webhooks WHERE tenant = $1 AND id = $2"};
const statement deliveries_delete{"DELETE FROM webhook_deliveries WHERE tenant = $1 AND webhook_id = $2"};
const statement retry_upsert{
  "INSERT INTO webhook_retries (due_ms, tenant, webhook_id, message_id, record) VALUES ($1, $2, $3, $4, $5) "
  "ON CONFLICT (due_ms, tenant, webhook_id, message_id) DO UPDATE SET record = EXCLUDED.record"};
const statement retry_delete{
  "DELETE FROM webhook_retries WHERE due_ms = $1 AND tenant = $2 AND webhook_id = $3 AND message_id = $4"};
const statement delivery_upsert{
  "INSERT INTO webhook_deliveries (tenant, webhook_id, number, record) VALUES ($1, $2, $3, $4) "
  "ON CONFLICT (tenant, webhook_id, number) DO UPDATE SET record = EXCLUDED.record"};
const statement delivery_delete{
  "DELETE FROM webhook_deliveries WHERE tenant = $1 AND webhook_id = $2 AND number = $3"};

template <class T, class Decode>
std::vector<T> decode_all(const rows& r, Decode decode) {
  std::vector<T> out;
  out.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) out.push_back(decode(r.text(i, 0)));
  return out;
}

class pg_webhook_store final : public webhook_writes {
public:
  explicit pg_webhook_store(const context& c) : db_(c.db), writable_(c.writable) {}

  std::optional<webhook_record> get(std::string_view tenant, std::string_view id) const override {
    auto r = db_.run(writable_ ? hook_get_locked : hook_get, {tenant, id});
    if (r.empty()) return std::nullopt;
    return decode_webhook(r.text(0, 0));
  }

  std::vector<webhook_record> owned(std::string_view tenant, std::string_view owner, std::string_view after,
                                    std::size_t limit) const override {
    if (writable_) db_.run(owner_lock, {tenant, owner});
    return decode_all<webhook_record>(db_.run(hooks_owned, {tenant, owner, after, count(limit)}), decode_webhook);
  }

  std::vector<webhook_record> enabled(std::string_view after, std::size_t limit) const override {
    auto cut = after.find('\0');  // a `resume_key`: tenant\0id
    auto tenant = after.substr(0, cut);
    auto id = cut == std::string_view::npos ? std::string_view{} : after.substr(cut + 1);
    return decode_all<webhook_record>(db_.run(hooks_enabled, {tenant, id, count(limit)}), decode_webhook);
  }

  std::vector<webhook_retry> due(std::int64_t now_ms, std::size_t limit, const webhook_retry* after) const override {
    auto from = after ? num(after->due_ms) : std::string{"-1"};
    auto r = db_.run(retries_due, {num(now_ms), from, after ? after->tenant : "", after ? after->webhook_id : "",
                                   after ? after->message_id : "", count(limit)});
    return decode_all<webhook_retry>(r, decode_retry);
  }

  std::optional<std::int64_t> next_due() const override {
    auto r = db_.run(retry_soonest);
    if (r.empty() || r.is_null(0, 0)) return std::nullopt;
    return r.integer(0, 0);
  }

  std::vector<webhook_delivery> deliveries(std::string_view tenant, std::string_view id, std::uint64_t before,
                                           std::size_t limit) const override {
    auto below = before == 0 ? std::string{"9223372036854775807"} : num(before);
    return decode_all<webhook_delivery>(db_.run(deliveries_page, {tenant, id, below, count(limit)}), decode_delivery);
  }

  void put(const webhook_record& w) override {
    db_.run(hook_upsert, {w.tenant, w.id, w.owner, w.enabled ? "true" : "false", encode_webhook(w)});
  }

  void erase(std::string_view tenant, std::string_view id) override {
    db_.run(hook_delete, {tenant, id});
    db_.run(deliveries_delete, {tenant, id});
  }

  void schedule(const webhook_retry& r) override {
    db_.run(retry_upsert, {num(r.due_ms), r.tenant, r.webhook_id, r.message_id, encode_retry(r)});
  }

  void unschedule(const webhook_retry& r) override {
    db_.run(retry_delete, {num(r.due_ms), r.tenant, r.webhook_id, r.message_id});
  }

  void log_delivery(const webhook_delivery& d, std::uint64_t keep) override {
    db_.run(delivery_upsert, {d.tenant, d.webhook_id, num(d.number), encode_delivery(d)});
    if (keep > 0 && d.number > keep) db_.run(delivery_delete, {d.tenant, d.webhook_id, num(d.number - keep)});
  }

private:
  static std::string count(std::size_t n) { return std::to_string(n); }

  const session& db_;
  bool writable_;
};

}  // namespace

const bool webhooks_implemented = implement<webhook_writes, pg_webhook_store>();

}  // namespace cl::storage::pg
