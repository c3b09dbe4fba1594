// Blob uploads and versions in SQL: the records as the key-value stores keep them (JSON,
// storage/record_codecs.hpp) beside the columns queries use. A version is a plain INSERT: two
// nodes completing uploads of one blob at once cannot both take the same number (the loser's
// mutation runs again and takes the next).

#include "storage/blob_store.hpp"

#include "storage/postgresql/backend.hpp"
#include "storage/record_codecs.hpp"

namespace cl::storage::pg {

namespace {

/// The group's tables, as a schema part of its own.
const bool schema = schema_part("blobs", {
  // 1: the store's tables.
  R"sql(
CREATE TABLE blob_uploads (
  tenant text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, state text NOT NULL, expires_at bigint NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (tenant, id));
CREATE INDEX blob_uploads_by_expiry ON blob_uploads (expires_at, tenant, id) WHERE state = 'IN_PROGRESS';
CREATE TABLE blob_versions (
  tenant text COLLATE "C" NOT NULL, blob_id text COLLATE "C" NOT NULL, version bigint NOT NULL, record text NOT NULL,
  PRIMARY KEY (tenant, blob_id, version));
)sql",
});

const statement upload_get{"SELECT record FROM blob_uploads WHERE tenant = $1 AND id = $2"};
// In a write: the upload stays this transaction's to its commit, so a completion and an abort (or
// two completions) through two nodes or lanes see each other's outcome instead of both landing.
const statement upload_get_locked{"SELECT record FROM blob_uploads WHERE tenant = $1 AND id = $2 FOR UPDATE"};
const statement version_get{"SELECT record FROM blob_versions WHERE tenant = $1 AND blob_id = $2 AND version = $3"};
const statement version_latest{
  "SELECT record FROM blob_versions WHERE tenant = $1 AND blob_id = $2 ORDER BY version DESC LIMIT 1"};
const statement uploads_expired{
  "SELECT record FROM blob_uploads WHERE state = 'IN_PROGRESS' AND expires_at < $1 "
  "ORDER BY expires_at, tenant, id LIMIT $2"};
const statement upload_upsert{
  "INSERT INTO blob_uploads (tenant, id, state, expires_at, record) VALUES ($1, $2, $3, $4, $5) "
  "ON CONFLICT (tenant, id) DO UPDATE SET state = EXCLUDED.state, expires_at = EXCLUDED.expires_at, "
  "record = EXCLUDED.record"};
const statement version_insert{
  "INSERT INTO blob_versions (tenant, blob_id, version, record) VALUES ($1, $2, $3, $4)"};

class pg_blob_store final : public blob_writes {
public:
  explicit pg_blob_store(const context& c) : db_(c.db), writable_(c.writable) {}

  std::optional<upload_record> upload(std::string_view tenant, std::string_view id) const override {
    auto r = db_.run(writable_ ? upload_get_locked : upload_get, {tenant, id});
    if (r.empty()) return std::nullopt;
    return decode_upload(r.text(0, 0));
  }

  std::optional<blob_version> version(std::string_view tenant, std::string_view blob_id,
                                      std::int64_t version) const override {
    auto r = version > 0 ? db_.run(version_get, {tenant, blob_id, num(version)}) : db_.run(version_latest, {tenant, blob_id});
    if (r.empty()) return std::nullopt;
    return decode_blob_version(r.text(0, 0));
  }

  std::vector<upload_record> expired_uploads(std::int64_t now, std::size_t limit) const override {
    auto r = db_.run(uploads_expired, {num(now), num(static_cast<std::uint64_t>(limit))});
    std::vector<upload_record> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back(decode_upload(r.text(i, 0)));
    return out;
  }

  void put_upload(const upload_record& u) override {
    db_.run(upload_upsert, {u.tenant, u.id, u.state, num(u.expires_at), encode_upload(u)});
  }

  void add_version(const blob_version& v) override {
    db_.run(version_insert, {v.tenant, v.blob_id, num(v.version), encode_blob_version(v)});
  }

private:
  const session& db_;
  bool writable_;
};

}  // namespace

const bool blobs_implemented = implement<blob_writes, pg_blob_store>();

}  // namespace cl::storage::pg
