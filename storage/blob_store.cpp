#include "storage/blob_store.hpp"

#include "storage/encoding.hpp"
#include "storage/json_record.hpp"
#include "storage/kv.hpp"

#include <boost/json.hpp>

namespace cl::storage {

using kv::big_endian_key;
using kv::tenant_key;

/// The tables this file owns or reads (declared by name: another file naming one shares it).
namespace tables {
const kv::table blob_upload_expiry = kv::declare_table("blob_upload_expiry");
const kv::table blob_uploads = kv::declare_table("blob_uploads");
const kv::table blob_versions = kv::declare_table("blob_versions");
}  // namespace tables

namespace json = boost::json;

bool upload_record::operator==(const upload_record& o) const {
  return tenant == o.tenant && id == o.id && blob_id == o.blob_id && uploader == o.uploader && client_id == o.client_id
         && method == o.method && store_upload_id == o.store_upload_id && object_key == o.object_key
         && content_type == o.content_type && size == o.size && part_size == o.part_size && expires_at == o.expires_at
         && state == o.state && version == o.version;
}

bool blob_version::operator==(const blob_version& o) const {
  return tenant == o.tenant && blob_id == o.blob_id && version == o.version && size == o.size
         && content_type == o.content_type && sha256 == o.sha256 && created == o.created && uploader == o.uploader
         && object_key == o.object_key;
}

namespace {

/// Key layout: `blob_uploads` tenant\0upl -> record; `blob_upload_expiry` <8-byte expires_at>
/// tenant\0upl -> "" (in progress only); `blob_versions` tenant\0blb\0<8-byte ~version> -> record
/// (newest first, so the latest is one read whatever the number of versions).
std::string expiry_key(std::int64_t expires_at, std::string_view tenant, std::string_view id) {
  return big_endian_key(static_cast<std::uint64_t>(expires_at)) + tenant_key(tenant, id);
}

std::string version_key(std::string_view tenant, std::string_view blob, std::int64_t version) {
  return tenant_key(tenant, std::string{blob} + '\0' + big_endian_key(~static_cast<std::uint64_t>(version)));
}

using json_record::number;
using json_record::text;

std::string encode(const upload_record& u) {
  return json::serialize(json::object{
    {"tenant", u.tenant},          {"id", u.id},
    {"blob_id", u.blob_id},        {"uploader", u.uploader},
    {"client_id", u.client_id},    {"method", u.method},
    {"store_upload_id", u.store_upload_id}, {"object_key", u.object_key},
    {"content_type", u.content_type}, {"size", u.size},
    {"part_size", u.part_size},    {"expires_at", u.expires_at},
    {"state", u.state},            {"version", u.version}});
}

upload_record decode_upload(std::string_view stored) {
  auto o = json::parse(stored).as_object();
  upload_record u;
  u.tenant = text(o, "tenant");
  u.id = text(o, "id");
  u.blob_id = text(o, "blob_id");
  u.uploader = text(o, "uploader");
  u.client_id = text(o, "client_id");
  u.method = text(o, "method");
  u.store_upload_id = text(o, "store_upload_id");
  u.object_key = text(o, "object_key");
  u.content_type = text(o, "content_type");
  u.size = number<std::uint64_t>(o, "size");
  u.part_size = number<std::uint64_t>(o, "part_size");
  u.expires_at = number<std::int64_t>(o, "expires_at");
  u.state = text(o, "state");
  u.version = number<std::int64_t>(o, "version");
  return u;
}

std::string encode(const blob_version& v) {
  return json::serialize(json::object{{"tenant", v.tenant},       {"blob_id", v.blob_id},
                                      {"version", v.version},     {"size", v.size},
                                      {"content_type", v.content_type}, {"sha256", v.sha256},
                                      {"created", v.created},     {"uploader", v.uploader},
                                      {"object_key", v.object_key}});
}

blob_version decode_version(std::string_view stored) {
  auto o = json::parse(stored).as_object();
  blob_version v;
  v.tenant = text(o, "tenant");
  v.blob_id = text(o, "blob_id");
  v.version = number<std::int64_t>(o, "version");
  v.size = number<std::uint64_t>(o, "size");
  v.content_type = text(o, "content_type");
  v.sha256 = text(o, "sha256");
  v.created = text(o, "created");
  v.uploader = text(o, "uploader");
  v.object_key = text(o, "object_key");
  return v;
}

class kv_blob_store final : public blob_writes {
public:
  explicit kv_blob_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<upload_record> upload(std::string_view tenant, std::string_view id) const override {
    auto stored = r_.get(tables::blob_uploads, tenant_key(tenant, id));
    if (!stored) return std::nullopt;
    return decode_upload(*stored);
  }

  std::optional<blob_version> version(std::string_view tenant, std::string_view blob_id,
                                      std::int64_t version) const override {
    if (version > 0) {
      auto stored = r_.get(tables::blob_versions, version_key(tenant, blob_id, version));
      if (!stored) return std::nullopt;
      return decode_version(*stored);
    }
    // The latest: the first key under the blob's prefix (versions are keyed newest first).
    auto first = r_.scan(tables::blob_versions, tenant_key(tenant, std::string{blob_id} + '\0'), {}, 1);
    if (first.empty()) return std::nullopt;
    return decode_version(first.front().second);
  }

  std::vector<upload_record> expired_uploads(std::int64_t now, std::size_t limit) const override {
    std::vector<upload_record> out;
    for (auto& [key, value] : r_.scan(tables::blob_upload_expiry, "", "", limit)) {
      if (key.size() < 8 || static_cast<std::int64_t>(encoding::get_u64(key)) >= now) break;
      auto id_key = key.substr(8);
      if (auto stored = r_.get(tables::blob_uploads, id_key)) out.push_back(decode_upload(*stored));
    }
    return out;
  }

  void put_upload(const upload_record& u) override {
    if (auto before = upload(u.tenant, u.id); before && before->state == "IN_PROGRESS")
      w_->erase(tables::blob_upload_expiry, expiry_key(before->expires_at, u.tenant, u.id));
    w_->put(tables::blob_uploads, tenant_key(u.tenant, u.id), encode(u));
    if (u.state == "IN_PROGRESS") w_->put(tables::blob_upload_expiry, expiry_key(u.expires_at, u.tenant, u.id), "");
  }

  void add_version(const blob_version& v) override {
    w_->put(tables::blob_versions, version_key(v.tenant, v.blob_id, v.version), encode(v));
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

}  // namespace

const store_kind blob_writes::kind = kv::register_store<kv_blob_store>();

}  // namespace cl::storage
