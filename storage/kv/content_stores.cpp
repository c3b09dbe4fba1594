#include "storage/content_stores.hpp"

#include "domain/content_format.hpp"
#include "domain/json_text.hpp"
#include "storage/encoding.hpp"
#include "storage/kv/codecs.hpp"
#include "storage/kv/kv.hpp"
#include "storage/stores.hpp"
#include "storage/walk.hpp"
#include "storage/kv/activity_readers.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <deque>

namespace cl::storage {

using kv::big_endian_key;
using kv::tenant_key;

/// The tables this file owns or reads (declared by name: another file naming one shares it).
namespace tables {
const kv::table activities = kv::declare_table("activities");
const kv::table activities_by_resource = kv::declare_table("activities_by_resource");
const kv::table activities_by_reader = kv::declare_table("activities_by_reader");
const kv::table agents = kv::declare_table("agents");
const kv::table blob_refs = kv::declare_table("blob_refs");
const kv::table grants = kv::declare_table("grants");
const kv::table grants_by_principal = kv::declare_table("grants_by_principal");
const kv::table resources = kv::declare_table("resources");
const kv::table resources_by_work = kv::declare_table("resources_by_work");
const kv::table sources = kv::declare_table("sources");
const kv::table versions = kv::declare_table("versions");
const kv::table works = kv::declare_table("works");
}  // namespace tables

namespace {

/// True when the filter `wanted` is empty or equals `value`.
bool matches(const std::string& wanted, const std::string& value) {
  return wanted.empty() || wanted == value;
}

constexpr char header_tag = '\x01';  ///< first byte of a value with a typed header (JSON starts with '{')
constexpr char header_tag_blobs = '\x02';  ///< the same, followed by the referenced blob ids

/// Key layout of the blob-to-Resource index: tenant\0blb\0res -> "".
std::string blob_ref_key(std::string_view tenant, std::string_view blob, std::string_view resource) {
  return tenant_key(tenant, std::string{blob} + '\0' + std::string{resource});
}

/// The JSON of a stored value (after its header).
std::optional<std::string> json_of_resource(std::optional<std::string> value) {
  if (!value) return value;
  if (auto d = decode_resource(*value)) return std::string{d->second};
  return value;
}
std::optional<std::string> json_of_activity(std::optional<std::string> value) {
  if (!value) return value;
  if (auto d = decode_activity(*value)) return std::string{d->second};
  return value;
}

using id_stream = walks::id_stream<std::string>;
using walks::merged_walk;
using walks::walk;

/// The ids under one key prefix of a table (and their values), in order, after `after`. After the
/// empty id even from the start, as PostgreSQL's lists (`id > $after`): an empty id is never
/// listed on any backend (tests/storage/differential_test.cpp).
id_stream scan_ids(const kv::reader& r, kv::table t, std::string prefix, const std::string& after) {
  return id_stream{[&r, t, prefix = std::move(prefix)](const std::string& from, std::size_t n) {
                     id_stream::chunk out;
                     for (auto& [key, value] : r.scan(t, prefix, prefix + from, n))
                       out.emplace_back(key.substr(prefix.size()), std::move(value));
                     return out;
                   },
                   after};
}

/// Key of the Activities-by-reader index: tenant\0principal\0activity.
std::string reader_key(std::string_view tenant, std::string_view principal, std::string_view activity) {
  return tenant_key(tenant, std::string{principal} + '\0' + std::string{activity});
}

class kv_resource_store final : public resource_writes {
public:
  explicit kv_resource_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<std::string> get(std::string_view tenant, std::string_view id) const override {
    require_storable({tenant, id});
    return json_of_resource(r_.get(tables::resources, tenant_key(tenant, id)));
  }

  std::optional<resource_header> header(std::string_view tenant, std::string_view id) const override {
    require_storable({tenant, id});
    auto value = r_.get(tables::resources, tenant_key(tenant, id));
    if (!value) return std::nullopt;
    if (auto d = decode_resource(*value)) return std::move(d->first);
    return resource_header_from_json(*value);
  }

  std::optional<std::string> version(std::string_view tenant, std::string_view id, std::string_view version) const override {
    require_storable({tenant, id, version});
    return r_.get(tables::versions, version_key(tenant, id, version));
  }

  std::vector<resource_position> every(const resource_position& after, std::size_t limit) const override {
    std::vector<resource_position> out;
    auto start = after.tenant.empty() ? std::string{} : tenant_key(after.tenant, after.id);
    for (const auto& [key, value] : r_.scan(tables::resources, "", start, limit)) {
      auto nul = key.find('\0');
      if (nul != std::string::npos) out.push_back({key.substr(0, nul), key.substr(nul + 1)});
    }
    return out;
  }

  record_page versions(const version_query& q) const override {
    auto ids = scan_ids(r_, tables::versions, version_key(q.tenant, q.resource_id, ""), q.after);
    return walk(ids, q.limit, q.limit, [](const std::string&, const std::string& value) { return std::optional{value}; });
  }

  record_page list(const resource_query& q) const override {
    // The filters read the typed header; the JSON is handed out as stored.
    auto keep = [&](const std::string& value) -> std::optional<std::string> {
      auto decoded = decode_resource(value);
      if (!decoded) return std::nullopt;  // every value has its header since format 4
      const auto& h = decoded->first;
      bool staged = h.work_id.empty();
      if (!matches(q.work_id, h.work_id) || !matches(q.type, h.type) || !matches(q.language, h.language)
          || (q.staged && *q.staged != staged))
        return std::nullopt;
      return std::string{decoded->second};
    };
    if (!q.work_id.empty()) {
      // A Work's Resources come from the by-Work index: a page costs the Work's ids it examines,
      // whatever else the tenant or the reader holds; a reader's grant is a point read per principal.
      auto ids = scan_ids(r_, tables::resources_by_work, tenant_key(q.tenant, q.work_id + '\0'), q.after);
      return walk(ids, q.limit, q.budget, [&](const std::string& id, const std::string&) -> std::optional<std::string> {
        if (!q.readable_by.empty()) {
          bool readable = false;
          for (const auto& p : q.readable_by)
            if ((readable = r_.get(tables::grants_by_principal, tenant_key(q.tenant, p + '\0' + id)).has_value())) break;
          if (!readable) return std::nullopt;
        }
        auto value = r_.get(tables::resources, tenant_key(q.tenant, id));
        return value ? keep(*value) : std::nullopt;
      });
    }
    if (q.readable_by.empty()) {
      auto ids = scan_ids(r_, tables::resources, tenant_key(q.tenant, ""), q.after);
      return walk(ids, q.limit, q.budget, [&](const std::string&, const std::string& value) { return keep(value); });
    }
    // The by-principal grant index gives each principal's Resource ids in order: merging those
    // walks exactly the readable ids after `after`, one point read per candidate.
    std::vector<id_stream> streams;
    streams.reserve(q.readable_by.size());
    for (const auto& p : q.readable_by)
      streams.push_back(scan_ids(r_, tables::grants_by_principal, tenant_key(q.tenant, p + '\0'), q.after));
    return merged_walk(streams, q.limit, q.budget, [&](const std::string& id, const std::string&) -> std::optional<std::string> {
      auto value = r_.get(tables::resources, tenant_key(q.tenant, id));
      return value ? keep(*value) : std::nullopt;
    });
  }

  void put(std::string_view tenant, std::string_view id, const resource_header& header,
           std::string_view record) override {
    require_storable({tenant, id, header.work_id, header.type, header.language, header.version, record});
    // The blob index follows the current content: references it dropped go, new ones come.
    std::vector<std::string> before;
    std::string work_before;
    if (auto old = this->header(tenant, id)) {
      before = std::move(old->blobs);
      work_before = std::move(old->work_id);
    }
    // The by-Work index follows the Resource's Work (a promotion gives it one).
    if (work_before != header.work_id) {
      if (!work_before.empty()) w_->erase(tables::resources_by_work, tenant_key(tenant, work_before + '\0' + std::string{id}));
      if (!header.work_id.empty()) w_->put(tables::resources_by_work, tenant_key(tenant, header.work_id + '\0' + std::string{id}), "");
    }
    for (const auto& b : before)
      if (!std::binary_search(header.blobs.begin(), header.blobs.end(), b)) w_->erase(tables::blob_refs, blob_ref_key(tenant, b, id));
    for (const auto& b : header.blobs)
      if (!std::binary_search(before.begin(), before.end(), b)) w_->put(tables::blob_refs, blob_ref_key(tenant, b, id), "");
    w_->put(tables::resources, tenant_key(tenant, id), encode_resource(header, record));
  }

  std::vector<std::string> referencing(std::string_view tenant, std::string_view blob_id, std::string_view after,
                                       std::size_t limit) const override {
    auto prefix = tenant_key(tenant, std::string{blob_id} + '\0');
    std::vector<std::string> out;
    for (auto& [key, value] : r_.scan(tables::blob_refs, prefix, after.empty() ? std::string{} : prefix + std::string{after}, limit))
      out.push_back(key.substr(prefix.size()));
    return out;
  }

  void put_version(std::string_view tenant, std::string_view id, std::string_view version,
                   std::string_view record) override {
    require_storable({tenant, id, version, record});
    w_->put(tables::versions, version_key(tenant, id, version), record);
  }

private:
  /// Key layout: `resources` tenant\0id; `versions` tenant\0id\0version.
  static std::string version_key(std::string_view tenant, std::string_view id, std::string_view version) {
    return tenant_key(tenant, std::string{id} + '\0' + std::string{version});
  }

  const kv::reader& r_;
  kv::writer* w_;
};

class kv_activity_store final : public activity_writes {
public:
  explicit kv_activity_store(const kv::context& c) : r_(c.r), w_(c.w), view_(c.view) {}

  std::optional<std::string> get(std::string_view tenant, std::string_view id) const override {
    require_storable({tenant, id});
    return json_of_activity(r_.get(tables::activities, tenant_key(tenant, id)));
  }

  record_page list(const activity_query& q) const override {
    auto readable = [&](const std::string& about) {
      if (about.empty() || q.readable_by.empty()) return true;
      // One point read per principal in the by-principal grant index: any grant lets it read.
      for (const auto& p : q.readable_by)
        if (view_.grants().role(q.tenant, p, about)) return true;
      return false;
    };
    // The filters read the typed header; the JSON is handed out as stored.
    auto keep = [&](const std::optional<std::string>& value) -> std::optional<std::string> {
      if (!value) return std::nullopt;
      auto decoded = decode_activity(*value);
      if (!decoded) return std::nullopt;  // every value has its header since format 4
      const auto& h = decoded->first;
      if (!matches(q.type, h.type) || !readable(h.about_resource)) return std::nullopt;
      return std::string{decoded->second};
    };
    if (!q.resource_id.empty()) {  // the by-Resource index: only that Resource's Activities
      auto ids = scan_ids(r_, tables::activities_by_resource, tenant_key(q.tenant, q.resource_id + '\0'), q.after);
      return walk(ids, q.limit, q.budget, [&](const std::string& id, const std::string&) {
        return keep(r_.get(tables::activities, tenant_key(q.tenant, id)));
      });
    }
    if (q.readable_by.empty()) {
      auto ids = scan_ids(r_, tables::activities, tenant_key(q.tenant, ""), q.after);
      return walk(ids, q.limit, q.budget,
                  [&](const std::string&, const std::string& value) { return keep(std::optional{value}); });
    }
    // The Activities-by-reader index lists, per principal, exactly the Activities it reads (and
    // under `everyone` those about no Resource): merging the caller's walks only what it may see,
    // so a page costs a page however many Activities of others come first.
    std::vector<id_stream> streams;
    streams.reserve(q.readable_by.size() + 1);
    for (const auto& p : q.readable_by)
      streams.push_back(scan_ids(r_, tables::activities_by_reader, reader_key(q.tenant, p, ""), q.after));
    streams.push_back(scan_ids(r_, tables::activities_by_reader, reader_key(q.tenant, kv::everyone, ""), q.after));
    return merged_walk(streams, q.limit, q.budget, [&](const std::string& id, const std::string&) {
      return keep(r_.get(tables::activities, tenant_key(q.tenant, id)));
    });
  }

  void put(std::string_view tenant, std::string_view id, const activity_header& header,
           std::string_view record) override {
    require_storable({tenant, id, header.about_resource, header.type, record});
    w_->put(tables::activities, tenant_key(tenant, id), encode_activity(header, record));
    if (header.about_resource.empty()) {
      w_->put(tables::activities_by_reader, reader_key(tenant, kv::everyone, id), "");
      return;
    }
    w_->put(tables::activities_by_resource,
            tenant_key(tenant, std::string{header.about_resource} + '\0' + std::string{id}), "");
    // Listed under every principal that reads its Resource now; grants given later add it then.
    auto prefix = tenant_key(tenant, std::string{header.about_resource} + '\0');
    std::string after;
    for (;;) {
      auto holders = r_.scan(tables::grants, prefix, after, 256);
      for (const auto& [key, value] : holders)
        w_->put(tables::activities_by_reader, reader_key(tenant, std::string_view{key}.substr(prefix.size()), id), "");
      if (holders.size() < 256) break;
      after = holders.back().first;
    }
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
  const read_view& view_;
};

kv::table table_of(catalog_kind kind) {
  switch (kind) {
    case catalog_kind::work: return tables::works;
    case catalog_kind::source: return tables::sources;
    case catalog_kind::agent: return tables::agents;
  }
  return tables::works;
}

class kv_catalog_store final : public catalog_writes {
public:
  explicit kv_catalog_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<std::string> get(catalog_kind kind, std::string_view tenant, std::string_view id) const override {
    require_storable({tenant, id});
    return r_.get(table_of(kind), tenant_key(tenant, id));
  }

  record_page list(const catalog_query& q) const override {
    auto ids = scan_ids(r_, table_of(q.kind), tenant_key(q.tenant, ""), q.after);
    return walk(ids, q.limit, q.limit, [](const std::string&, const std::string& value) { return std::optional{value}; });
  }

  void put(catalog_kind kind, std::string_view tenant, std::string_view id, std::string_view record) override {
    require_storable({tenant, id, record});
    w_->put(table_of(kind), tenant_key(tenant, id), record);
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

}  // namespace

std::string encode_resource(const resource_header& h, std::string_view json) {
  std::string out(1, h.blobs.empty() ? header_tag : header_tag_blobs);
  for (const auto* f : {&h.work_id, &h.type, &h.language, &h.version}) encoding::put_text(out, *f);
  if (!h.blobs.empty()) {
    encoding::put_text(out, std::to_string(h.blobs.size()));
    for (const auto& b : h.blobs) encoding::put_text(out, b);
  }
  out.append(json);
  return out;
}

std::optional<std::pair<resource_header, std::string_view>> decode_resource(std::string_view value) {
  if (value.empty() || (value[0] != header_tag && value[0] != header_tag_blobs)) return std::nullopt;
  bool with_blobs = value[0] == header_tag_blobs;
  value.remove_prefix(1);
  resource_header h;
  for (auto* f : {&h.work_id, &h.type, &h.language, &h.version})
    if (!encoding::get_text(value, *f)) return std::nullopt;
  if (with_blobs) {
    std::string count;
    if (!encoding::get_text(value, count) || count.empty() || count.size() > 5) return std::nullopt;
    h.blobs.resize(std::stoul(count));
    for (auto& b : h.blobs)
      if (!encoding::get_text(value, b)) return std::nullopt;
  }
  return std::pair{std::move(h), value};
}

std::string encode_activity(const activity_header& h, std::string_view json) {
  std::string out(1, header_tag);
  encoding::put_text(out, h.about_resource);
  encoding::put_text(out, h.type);
  out.append(json);
  return out;
}

std::optional<std::pair<activity_header, std::string_view>> decode_activity(std::string_view value) {
  if (value.empty() || value[0] != header_tag) return std::nullopt;
  value.remove_prefix(1);
  activity_header h;
  if (!encoding::get_text(value, h.about_resource) || !encoding::get_text(value, h.type)) return std::nullopt;
  return std::pair{std::move(h), value};
}

const bool resources_implemented = kv::implement<resource_writes, kv_resource_store>();

void kv::index_resource_activities(const reader& r, writer& w, std::string_view tenant, std::string_view resource,
                                   std::string_view principal, bool add) {
  auto prefix = tenant_key(tenant, std::string{resource} + '\0');
  std::string after;
  for (;;) {
    auto page = r.scan(tables::activities_by_resource, prefix, after, 256);
    for (const auto& [key, value] : page) {
      auto k = reader_key(tenant, principal, std::string_view{key}.substr(prefix.size()));
      if (add) w.put(tables::activities_by_reader, k, "");
      else w.erase(tables::activities_by_reader, k);
    }
    if (page.size() < 256) return;
    after = page.back().first;
  }
}

const bool activities_implemented = kv::implement<activity_writes, kv_activity_store>();

const bool catalog_implemented = kv::implement<catalog_writes, kv_catalog_store>();

}  // namespace cl::storage
