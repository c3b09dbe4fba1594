#include "storage/blob_store.hpp"

#include "storage/every_record.hpp"
#include "storage/json_record.hpp"
#include "storage/record_store.hpp"
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

namespace {

std::string upload_text(const upload_record& u) { return position_text({u.tenant, u.id}); }

std::string version_text(const blob_version& v) {
  return copy_position::join({v.tenant, v.blob_id, std::to_string(v.version)});
}

blob_version version_from_text(const std::string& text) {
  blob_version v;
  if (text.empty()) return v;
  v.tenant = copy_position::part(text, 0);
  v.blob_id = copy_position::part(text, 1);
  v.version = std::stoll(copy_position::part(text, 2));
  return v;
}

}  // namespace

std::vector<record_kind> blob_reads::record_kinds() const {
  return {{"blob_uploads", 70,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto us = every_record(from).uploads(position_from_text(after), copy_page_size);
             for (const auto& u : us) page.writes.push_back([u](write_txn& tx) { blobs(tx).put_upload(u); });
             return finished(std::move(page), us, upload_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(every_record(s).uploads(position_from_text(after), copy_page_size), upload_text);
           },
           [](const read_view& s, const std::string& key) -> std::optional<std::string> {
             auto p = position_from_text(key);
             auto u = blobs(s).upload(p.tenant, p.id);
             if (!u) return std::nullopt;
             return u->blob_id + "|" + u->state + "|" + std::to_string(u->expires_at) + "|" + std::to_string(u->version);
           }},
          {"blob_versions", 70,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto vs = every_record(from).blob_versions(version_from_text(after), copy_page_size);
             for (const auto& v : vs)
               page.writes.push_back([v](write_txn& tx) {
                 if (!blobs(tx).version(v.tenant, v.blob_id, v.version)) blobs(tx).add_version(v);
               });
             return finished(std::move(page), vs, version_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(every_record(s).blob_versions(version_from_text(after), copy_page_size), version_text);
           },
           [](const read_view& s, const std::string& key) -> std::optional<std::string> {
             auto p = version_from_text(key);
             auto v = blobs(s).version(p.tenant, p.blob_id, p.version);
             if (!v) return std::nullopt;
             return v->sha256 + "|" + std::to_string(v->size) + "|" + v->object_key;
           }}};
}

}  // namespace cl::storage
