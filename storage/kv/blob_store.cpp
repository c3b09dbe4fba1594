#include "storage/blob_store.hpp"

#include "storage/encoding.hpp"
#include "storage/record_codecs.hpp"
#include "storage/kv/kv.hpp"


namespace cl::storage {

using kv::big_endian_key;
using kv::tenant_key;

/// The tables this file owns or reads (declared by name: another file naming one shares it).
namespace tables {
const kv::table blob_upload_expiry = kv::declare_table("blob_upload_expiry");
const kv::table blob_uploads = kv::declare_table("blob_uploads");
const kv::table blob_versions = kv::declare_table("blob_versions");
}  // namespace tables


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

class kv_blob_store final : public blob_writes {
public:
  explicit kv_blob_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<upload_record> upload(std::string_view tenant, std::string_view id) const override {
    require_storable({tenant, id});
    auto stored = r_.get(tables::blob_uploads, tenant_key(tenant, id));
    if (!stored) return std::nullopt;
    return decode_upload(*stored);
  }

  std::optional<blob_version> version(std::string_view tenant, std::string_view blob_id,
                                      std::int64_t version) const override {
    require_storable({tenant, blob_id});
    if (version > 0) {
      auto stored = r_.get(tables::blob_versions, version_key(tenant, blob_id, version));
      if (!stored) return std::nullopt;
      return decode_blob_version(*stored);
    }
    // The latest: the first key under the blob's prefix (versions are keyed newest first).
    auto first = r_.scan(tables::blob_versions, tenant_key(tenant, std::string{blob_id} + '\0'), {}, 1);
    if (first.empty()) return std::nullopt;
    return decode_blob_version(first.front().second);
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
    require_storable({u.tenant, u.id, u.blob_id, u.uploader, u.client_id, u.object_key, u.content_type});
    if (auto before = upload(u.tenant, u.id); before && before->state == "IN_PROGRESS")
      w_->erase(tables::blob_upload_expiry, expiry_key(before->expires_at, u.tenant, u.id));
    w_->put(tables::blob_uploads, tenant_key(u.tenant, u.id), encode_upload(u));
    if (u.state == "IN_PROGRESS") w_->put(tables::blob_upload_expiry, expiry_key(u.expires_at, u.tenant, u.id), "");
  }

  void add_version(const blob_version& v) override {
    require_storable({v.tenant, v.blob_id, v.content_type, v.object_key, v.uploader});
    w_->put(tables::blob_versions, version_key(v.tenant, v.blob_id, v.version), encode_blob_version(v));
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

}  // namespace

const bool implemented = kv::implement<blob_writes, kv_blob_store>();

}  // namespace cl::storage
