// Every record of every kind in SQL, in primary-key order, for `contentlake migrate`.

#include "storage/every_record.hpp"

#include "storage/postgresql/backend.hpp"
#include "storage/record_codecs.hpp"

namespace cl::storage::pg {

namespace {

const statement activities_after{
  "SELECT tenant, id FROM activities WHERE (tenant, id) > ($1, $2) ORDER BY tenant, id LIMIT $3"};
const statement catalog_after{
  "SELECT tenant, id FROM catalog WHERE kind = $1 AND (tenant, id) > ($2, $3) ORDER BY tenant, id LIMIT $4"};
const statement contracts_after{
  "SELECT tenant, id FROM contracts WHERE (tenant, id) > ($1, $2) ORDER BY tenant, id LIMIT $3"};
const statement grants_after{
  "SELECT tenant, resource_id, principal FROM grants WHERE (tenant, resource_id, principal) > ($1, $2, $3) "
  "ORDER BY tenant, resource_id, principal LIMIT $4"};
const statement ledger_after{
  "SELECT tenant, client_id, key FROM idempotency WHERE (tenant, client_id, key) > ($1, $2, $3) "
  "ORDER BY tenant, client_id, key LIMIT $4"};
const statement uploads_after{
  "SELECT record FROM blob_uploads WHERE (tenant, id) > ($1, $2) ORDER BY tenant, id LIMIT $3"};
const statement versions_after{
  "SELECT record FROM blob_versions WHERE (tenant, blob_id, version) > ($1, $2, $3) "
  "ORDER BY tenant, blob_id, version LIMIT $4"};
const statement webhooks_after{
  "SELECT record FROM webhooks WHERE (tenant, id) > ($1, $2) ORDER BY tenant, id LIMIT $3"};
const statement change_import{
  "INSERT INTO change_log (seq, transaction, tenant, kind, id, op, at_ms, version, hash, principal) "
  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"};
const statement head_at_least{"UPDATE change_head SET seq = greatest(seq, $1)"};

/// Each row of `r` made into an item by `make(row)`.
template <class Item, class Make>
std::vector<Item> each_row(const rows& r, Make make) {
  std::vector<Item> out;
  out.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) out.push_back(make(i));
  return out;
}

std::vector<resource_position> positions(const rows& r) {
  return each_row<resource_position>(r, [&](std::size_t i) { return resource_position{r.str(i, 0), r.str(i, 1)}; });
}

/// Rows of (tenant, x, y) keys.
template <class Key>
std::vector<Key> triples(const rows& r) {
  return each_row<Key>(r, [&](std::size_t i) { return Key{r.str(i, 0), r.str(i, 1), r.str(i, 2)}; });
}

/// Rows of one stored record each, decoded by `decode`.
template <class Record>
std::vector<Record> records(const rows& r, Record (*decode)(std::string_view)) {
  return each_row<Record>(r, [&](std::size_t i) { return decode(r.text(i, 0)); });
}

class pg_every_record final : public every_record_writes {
public:
  explicit pg_every_record(const context& c) : db_(c.db) {}

  std::vector<resource_position> activities(const resource_position& after, std::size_t limit) const override {
    return positions(db_.run(activities_after, {after.tenant, after.id, num(static_cast<std::uint64_t>(limit))}));
  }

  std::vector<resource_position> catalog(catalog_kind kind, const resource_position& after,
                                         std::size_t limit) const override {
    return positions(db_.run(catalog_after, {std::to_string(static_cast<int>(kind)), after.tenant, after.id,
                                             num(static_cast<std::uint64_t>(limit))}));
  }

  std::vector<resource_position> contracts(const resource_position& after, std::size_t limit) const override {
    return positions(db_.run(contracts_after, {after.tenant, after.id, num(static_cast<std::uint64_t>(limit))}));
  }

  std::vector<grant_ref> grants(const grant_ref& after, std::size_t limit) const override {
    return triples<grant_ref>(
      db_.run(grants_after, {after.tenant, after.resource_id, after.principal, num(static_cast<std::uint64_t>(limit))}));
  }

  std::vector<domain::ledger_key> ledger(const domain::ledger_key& after, std::size_t limit) const override {
    return triples<domain::ledger_key>(
      db_.run(ledger_after, {after.tenant, after.client_id, after.key, num(static_cast<std::uint64_t>(limit))}));
  }

  std::vector<upload_record> uploads(const resource_position& after, std::size_t limit) const override {
    return records(db_.run(uploads_after, {after.tenant, after.id, num(static_cast<std::uint64_t>(limit))}), &decode_upload);
  }

  std::vector<blob_version> blob_versions(const blob_version& after, std::size_t limit) const override {
    return records(db_.run(versions_after, {after.tenant, after.blob_id, num(after.version), num(static_cast<std::uint64_t>(limit))}),
                   &decode_blob_version);
  }

  std::vector<webhook_record> webhooks(const resource_position& after, std::size_t limit) const override {
    return records(db_.run(webhooks_after, {after.tenant, after.id, num(static_cast<std::uint64_t>(limit))}), &decode_webhook);
  }

  void import_change(const change_entry& e) override {
    db_.run(change_import, {num(e.seq), num(e.transaction), e.tenant, std::to_string(static_cast<int>(e.kind)), e.id,
                            std::to_string(static_cast<int>(e.op)), num(e.at_ms), e.version, e.hash, e.principal});
    db_.run(head_at_least, {num(e.seq)});
  }

private:
  const session& db_;
};

}  // namespace

const bool every_record_implemented = implement<every_record_writes, pg_every_record>();

}  // namespace cl::storage::pg
