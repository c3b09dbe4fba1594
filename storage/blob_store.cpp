#include "storage/blob_store.hpp"

#include "storage/json_record.hpp"
#include "storage/record_codecs.hpp"

#include <boost/json.hpp>

namespace cl::storage {

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

using json_record::number;
using json_record::text;

std::string encode_upload(const upload_record& u) {
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

std::string encode_blob_version(const blob_version& v) {
  return json::serialize(json::object{{"tenant", v.tenant},       {"blob_id", v.blob_id},
                                      {"version", v.version},     {"size", v.size},
                                      {"content_type", v.content_type}, {"sha256", v.sha256},
                                      {"created", v.created},     {"uploader", v.uploader},
                                      {"object_key", v.object_key}});
}

blob_version decode_blob_version(std::string_view stored) {
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

}  // namespace cl::storage
