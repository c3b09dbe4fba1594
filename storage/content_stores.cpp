// Each typed store and what it owns on each backend (docs/architecture.md, "Storage"):
//
// | store | interface | what it owns on LMDB (`storage/kv/`) | on PostgreSQL (`storage/postgresql/`) |
// |---|---|---|---|
// | resources | `resource_reads/_writes` (`storage/content_stores.hpp`) | `resources` tenant\0id -> typed header + JSON, `versions`, `resources_by_work`, `blob_refs` | `resources` (header columns + `record`), `resource_versions`, `resource_blobs`; by Work: partial index |
// | activities | `activity_reads/_writes` | `activities` (header + JSON), `activities_by_resource`, `activities_by_reader` tenant\0principal\0id (`*`: about no Resource) | `activities` + index by Resource, `activity_readers` |
// | catalogue | `catalog_reads/_writes` (Works, Sources, Agents) | `works`, `sources`, `agents` tenant\0id | `catalog(kind, tenant, id, record)` |
// | grants | `grant_reads/_writes` (`storage/grant_store.hpp`) | `grants` tenant\0res\0principal, `grants_by_principal` | `grants` + index (tenant, principal, resource_id) |
// | contracts | `contract_reads/_writes` (`storage/contract_store.hpp`) | `contracts` (latest), `contract_versions`, `contract_works` (+ usage pairs) | `contracts`, `contract_versions`, `contract_works`, `contract_usages` |
// | idempotency ledger | `ledger_reads/_writes` (`storage/ledger_store.hpp`) | `ledger` tenant\0client\0key, `ledger_expiry` | `idempotency` keyed (tenant, client_id, key) + index on created_ms |
// | blobs (group) | `blob_reads/_writes` (`storage/blob_store.hpp`) | `blob_uploads`, `blob_upload_expiry`, `blob_versions` (newest first) | schema part `blobs`: `blob_uploads` + partial index on expiry, `blob_versions` |
// | webhooks (group) | `webhook_reads/_writes` (`storage/webhook_store.hpp`) | endpoints, enabled ones, retries by due time, delivery logs | schema part `webhooks`: one table each |
// | change log | `record_store::read_from`, `write_txn::log_change`, consumers | `changes` <8-byte seq> -> entry, `change_consumers` | `change_log`, `change_head`, `change_consumers` |

#include "storage/content_stores.hpp"

#include "domain/content_format.hpp"
#include "storage/every_record.hpp"
#include "storage/record_store.hpp"

#include <boost/json.hpp>

namespace cl::storage {

namespace {

/// A stored record's own members: what precedes its (client-supplied) content.
std::string_view record_head(std::string_view record) {
  return record.substr(0, record.find(",\"content\":"));
}

/// The string value of top-level member `name` in `head`, or empty.
std::string member(std::string_view head, std::string_view name) {
  auto needle = "\"" + std::string{name} + "\":\"";
  auto at = head.find(needle);
  if (at == std::string_view::npos) return {};
  auto start = at + needle.size();
  return std::string{head.substr(start, head.find('"', start) - start)};
}

/// The string member `name` of `o`, or empty.
std::string string_member(const boost::json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_string() ? std::string{v->as_string()} : std::string{};
}

}  // namespace

resource_fields fields_of(std::string_view resource_record) {
  auto head = record_head(resource_record);
  return resource_fields{member(head, "work_id"), member(head, "version")};
}

std::map<std::string, std::string> resource_reads::works_of(std::string_view tenant,
                                                            const std::vector<std::string>& ids) const {
  std::map<std::string, std::string> out;
  for (const auto& id : ids)
    if (!out.count(id))
      if (auto h = header(tenant, id)) out.emplace(id, std::move(h->work_id));
  return out;
}

std::map<std::string, std::pair<std::string, resource_header>> resource_reads::records_of(
  std::string_view tenant, const std::vector<std::string>& ids) const {
  std::map<std::string, std::pair<std::string, resource_header>> out;
  for (const auto& id : ids) {
    if (out.count(id)) continue;
    auto record = get(tenant, id);
    auto h = header(tenant, id);
    if (record && h) out.emplace(id, std::make_pair(std::move(*record), std::move(*h)));
  }
  return out;
}

std::string activity_about(std::string_view activity_record) {
  return activity_header_from_json(activity_record).about_resource;
}

resource_header resource_header_from_json(std::string_view json) {
  auto o = boost::json::parse(json).as_object();
  resource_header h{string_member(o, "work_id"), string_member(o, "type"), string_member(o, "language"),
                    string_member(o, "version"), {}};
  if (auto* content = o.if_contains("content")) h.blobs = domain::referenced_blobs(*content);
  return h;
}

activity_header activity_header_from_json(std::string_view json) {
  auto o = boost::json::parse(json).as_object();
  activity_header h;
  h.type = string_member(o, "type");
  if (auto* target = o.if_contains("target"); target && target->is_object()
      && string_member(target->as_object(), "kind") == "resource")
    h.about_resource = string_member(target->as_object(), "id");
  return h;
}

std::string position_text(const resource_position& p) { return copy_position::join({p.tenant, p.id}); }

resource_position position_from_text(const std::string& text) {
  return {copy_position::part(text, 0), copy_position::part(text, 1)};
}

namespace {

/// Every version of a Resource, oldest first.
std::vector<std::pair<std::string, std::string>> resource_versions(const read_view& v, const resource_position& r) {
  std::vector<std::pair<std::string, std::string>> out;
  version_query q{r.tenant, r.id, {}, copy_page_size};
  for (;;) {
    auto page = v.resources().versions(q);
    for (auto& e : page.entries) out.push_back(std::move(e));
    if (page.exhausted || page.entries.empty()) return out;
    q.after = page.resume_after;
  }
}

template <catalog_kind K>
record_kind catalog_records(const char* name) {
  return {name, 10,
          [](const read_view& from, const std::string& after) {
            copied_page page;
            auto ps = every_record(from).catalog(K, position_from_text(after), copy_page_size);
            for (const auto& p : ps)
              if (auto record = from.catalog().get(K, p.tenant, p.id))
                page.writes.push_back([p, record = *record](write_txn& tx) { tx.catalog().put(K, p.tenant, p.id, record); });
            return finished(std::move(page), ps, position_text);
          },
          [](const read_view& s, const std::string& after) {
            return keys_of(every_record(s).catalog(K, position_from_text(after), copy_page_size), position_text);
          },
          [](const read_view& s, const std::string& key) {
            auto p = position_from_text(key);
            return s.catalog().get(K, p.tenant, p.id);
          }};
}

}  // namespace

std::vector<record_kind> catalog_reads::record_kinds() const {
  return {catalog_records<catalog_kind::work>("works"), catalog_records<catalog_kind::source>("sources"),
          catalog_records<catalog_kind::agent>("agents")};
}

std::vector<record_kind> resource_reads::record_kinds() const {
  // A Resource is copied with its header and every version.
  return {{"resources", 30,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto ps = from.resources().every(position_from_text(after), copy_page_size);
             for (const auto& p : ps) {
               auto record = from.resources().get(p.tenant, p.id);
               auto header = from.resources().header(p.tenant, p.id);
               if (!record || !header) continue;  // removed since the page was read
               page.writes.push_back([p, record = *record, header = *header,
                                      versions = resource_versions(from, p)](write_txn& tx) {
                 tx.resources().put(p.tenant, p.id, header, record);
                 for (const auto& [version, snapshot] : versions) tx.resources().put_version(p.tenant, p.id, version, snapshot);
               });
             }
             return finished(std::move(page), ps, position_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(s.resources().every(position_from_text(after), copy_page_size), position_text);
           },
           [](const read_view& s, const std::string& key) -> std::optional<std::string> {
             auto p = position_from_text(key);
             auto record = s.resources().get(p.tenant, p.id);
             if (!record) return std::nullopt;
             for (const auto& [v, snapshot] : resource_versions(s, p)) *record += "\n" + v + ":" + snapshot;
             return record;
           }}};
}

std::vector<record_kind> activity_reads::record_kinds() const {
  return {{"activities", 40,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto ps = every_record(from).activities(position_from_text(after), copy_page_size);
             for (const auto& p : ps)
               if (auto record = from.activities().get(p.tenant, p.id))
                 page.writes.push_back([p, record = *record](write_txn& tx) {
                   tx.activities().put(p.tenant, p.id, activity_header_from_json(record), record);
                 });
             return finished(std::move(page), ps, position_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(every_record(s).activities(position_from_text(after), copy_page_size), position_text);
           },
           [](const read_view& s, const std::string& key) {
             auto p = position_from_text(key);
             return s.activities().get(p.tenant, p.id);
           }}};
}

}  // namespace cl::storage
