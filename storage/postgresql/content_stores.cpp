// Resources, Activities and the catalogue in SQL (the mapping in storage/content_stores.hpp).
//
// Lists walk an index in id order in chunks (`... AND id > $after ORDER BY id LIMIT $n`) with the
// typed header's columns, keep what the filters accept within the query's budget (storage/walk.hpp,
// as on LMDB), then read the kept records in one statement: a page costs a page.
//
// A Resource written after the mutation read it is written with a compare-and-set on the version
// it read (`UPDATE ... WHERE version = $seen`): when another node changed it in between, the
// statement finds no row, the mutation loses (a conflict) and the writer runs it again on what won.

#include "storage/content_stores.hpp"

#include "storage/postgresql/backend.hpp"
#include "storage/postgresql/hot_records.hpp"
#include "storage/walk.hpp"

#include <algorithm>
#include <map>

namespace cl::storage::pg {

namespace {

const std::string everyone = "*";  ///< the reader of Activities about no Resource (as on LMDB)

std::string limit_of(std::size_t n) { return std::to_string(n); }

/// The chunk a stream reads for a page of `limit`: enough to fill it when the filters keep most.
std::size_t chunk_for(std::size_t limit) { return std::min<std::size_t>(std::max<std::size_t>(limit + 1, 16), 256); }

/// Fills the records of a page's entries (kept with empty records) in one statement.
void fill_records(const session& db, const statement& s, std::string_view tenant, record_page& page) {
  if (page.entries.empty()) return;
  std::vector<std::string> ids;
  ids.reserve(page.entries.size());
  for (const auto& e : page.entries) ids.push_back(e.first);
  auto r = db.run(s, {tenant, array_literal(ids)});
  std::map<std::string, std::string, std::less<>> found;
  for (std::size_t i = 0; i < r.size(); ++i) found.emplace(r.str(i, 0), r.str(i, 1));
  std::vector<std::pair<std::string, std::string>> kept;
  for (auto& e : page.entries)
    if (auto f = found.find(e.first); f != found.end()) kept.emplace_back(std::move(e.first), std::move(f->second));
  page.entries = std::move(kept);  // one removed since the walk read its header is left out
}

/// A page of (id, record) rows read with one more than `limit`: the extra row only tells there is more.
record_page page_of(const rows& r, std::size_t limit) {
  record_page page;
  for (std::size_t i = 0; i < r.size() && i < limit; ++i) {
    page.resume_after = r.str(i, 0);
    page.entries.emplace_back(page.resume_after, r.str(i, 1));
  }
  page.examined = page.entries.size();
  page.exhausted = r.size() <= limit;
  return page;
}

bool matches(const std::string& wanted, std::string_view value) { return wanted.empty() || wanted == value; }

// --- Resources -----------------------------------------------------------------------------------

// A write's reads also answer the row's `xmin` (the transaction that last wrote it): the write's
// compare-and-set is on it, since a Resource's `version` stays put through an edit of its title
// alone, and two such edits with one update_token must not both win.
const statement resource_get{"SELECT record, xmin::text FROM resources WHERE tenant = $1 AND id = $2"};
const statement resource_header_get{
  "SELECT work_id, type, language, version, blobs, xmin::text FROM resources WHERE tenant = $1 AND id = $2"};
const statement resource_whole_get{
  "SELECT record, work_id, type, language, version, blobs FROM resources WHERE tenant = $1 AND id = $2"};
// Look-ups of many keys: one probe of the whole key per key (unnest, then a LATERAL the planner
// cannot merge), never `id = ANY($2)`, which for a tenant the statistics have not seen may be
// planned as a walk of the tenant with the list as a filter.
#define CL_EACH_ID(columns, table) \
  "SELECT k.id, " columns " FROM unnest($2::text[]) AS k(id) CROSS JOIN LATERAL (SELECT " columns " FROM " table \
  " x WHERE x.tenant = $1 AND x.id = k.id OFFSET 0) r"
const statement works_of_ids{CL_EACH_ID("work_id", "resources")};
const statement resource_wholes{
  "SELECT k.id, r.record, r.work_id, r.type, r.language, r.version, r.blobs, r.written_by FROM unnest($2::text[]) AS k(id) "
  "CROSS JOIN LATERAL (SELECT record, work_id, type, language, version, blobs, xmin::text AS written_by FROM resources x "
  "WHERE x.tenant = $1 AND x.id = k.id OFFSET 0) r"};
const statement resource_records{CL_EACH_ID("record", "resources")};
const statement version_get{"SELECT record FROM resource_versions WHERE tenant = $1 AND id = $2 AND version = $3"};
const statement version_page{
  "SELECT version, record FROM resource_versions WHERE tenant = $1 AND id = $2 AND version > $3 "
  "ORDER BY version LIMIT $4"};
const statement resource_every{
  "SELECT tenant, id FROM resources WHERE (tenant, id) > ($1, $2) ORDER BY tenant, id LIMIT $3"};
const statement resources_of_tenant{
  "SELECT id, work_id, type, language, true FROM resources WHERE tenant = $1 AND id > $2 ORDER BY id LIMIT $3"};
const statement resources_of_work{
  "SELECT id, work_id, type, language, "
  "cardinality($5::text[]) = 0 OR EXISTS (SELECT 1 FROM grants g WHERE g.tenant = r.tenant AND g.resource_id = r.id "
  "AND g.principal = ANY($5::text[])) "
  "FROM resources r WHERE tenant = $1 AND work_id = $2 AND work_id <> '' AND (work_id, id) > ($2, $3) "
  "ORDER BY id LIMIT $4"};
// The joins look the inner row up by its whole key, in a LATERAL subquery the planner cannot merge
// (OFFSET 0): as a plain join, for a tenant the statistics have not seen (estimated at a row), the
// planner may bind the inner index by the tenant alone and filter on the rest, a walk of the
// tenant per row of the page.
const statement resources_of_principal{
  "SELECT g.resource_id, r.work_id, r.type, r.language, true FROM grants g "
  "CROSS JOIN LATERAL (SELECT work_id, type, language FROM resources x "
  "WHERE x.tenant = g.tenant AND x.id = g.resource_id OFFSET 0) r "
  "WHERE g.tenant = $1 AND g.principal = $2 AND (g.principal, g.resource_id) > ($2, $3) "
  "ORDER BY g.resource_id LIMIT $4"};
// A Resource's write and its blob index in one statement: the row (inserted, upserted, or updated
// when its version is still the one this mutation read), then, only when it was written, the
// references its content no longer makes go and the new ones come. Answers the rows written. The
// references that go are looked up by their whole key, from the row as it was (every part of the
// statement reads the state before it): the index is by blob, and a look-up by the Resource alone
// would walk every reference of the tenant.
#define CL_RESOURCE_BLOBS                                                                                         \
  ", gone AS (DELETE FROM resource_blobs WHERE tenant = $1 AND resource_id = $2 AND blob_id = ANY(coalesce(("      \
  "SELECT blobs FROM resources WHERE tenant = $1 AND id = $2), '{}')) AND NOT (blob_id = ANY($7::text[])) "       \
  "AND EXISTS (SELECT 1 FROM written)), "                                                                         \
  "added AS (INSERT INTO resource_blobs (tenant, blob_id, resource_id) SELECT $1, b, $2 FROM unnest($7::text[]) AS x(b) " \
  "WHERE EXISTS (SELECT 1 FROM written) ON CONFLICT DO NOTHING) SELECT count(*) FROM written"
const statement resource_insert{
  "WITH written AS (INSERT INTO resources (tenant, id, work_id, type, language, version, blobs, record) "
  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING 1)" CL_RESOURCE_BLOBS};
const statement resource_upsert{
  "WITH written AS (INSERT INTO resources (tenant, id, work_id, type, language, version, blobs, record) "
  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant, id) DO UPDATE SET work_id = EXCLUDED.work_id, "
  "type = EXCLUDED.type, language = EXCLUDED.language, version = EXCLUDED.version, blobs = EXCLUDED.blobs, "
  "record = EXCLUDED.record RETURNING 1)" CL_RESOURCE_BLOBS};
const statement resource_cas{
  "WITH written AS (UPDATE resources SET work_id = $3, type = $4, language = $5, version = $6, blobs = $7, "
  "record = $8 WHERE tenant = $1 AND id = $2 AND xmin = $9::xid RETURNING 1)" CL_RESOURCE_BLOBS};
#undef CL_RESOURCE_BLOBS
const statement blob_refs_page{
  "SELECT resource_id FROM resource_blobs WHERE tenant = $1 AND blob_id = $2 AND resource_id > $3 "
  "ORDER BY resource_id LIMIT $4"};
const statement version_upsert{
  "INSERT INTO resource_versions (tenant, id, version, record) VALUES ($1, $2, $3, $4) "
  "ON CONFLICT (tenant, id, version) DO UPDATE SET record = EXCLUDED.record"};

/// What a Resource list's walk reads per candidate: its header's filter columns.
struct resource_item {
  std::string work_id, type, language;
  bool readable = true;
};
using resource_stream = walks::id_stream<resource_item>;

class pg_resource_store final : public resource_writes {
public:
  explicit pg_resource_store(const context& c)
    : db_(c.db), reads_(c.reads()), writable_(c.writable), hot_(c.writable ? nullptr : c.hot),
      touched_(c.batch ? &c.batch->touched : nullptr) {}

  std::optional<std::string> get(std::string_view tenant, std::string_view id) const override {
    if (hot_) {
      auto e = cached(tenant, id);
      return e ? std::optional<std::string>{std::move(e->record)} : std::nullopt;
    }
    auto r = reads_.run(resource_get, {tenant, id});
    remember(tenant, id, r.empty() ? std::optional<std::string>{} : r.str(0, 1));
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }

  std::optional<resource_header> header(std::string_view tenant, std::string_view id) const override {
    if (hot_) {
      auto e = cached(tenant, id);
      return e ? std::optional<resource_header>{std::move(e->header)} : std::nullopt;
    }
    auto r = reads_.run(resource_header_get, {tenant, id});
    remember(tenant, id, r.empty() ? std::optional<std::string>{} : r.str(0, 5));
    if (r.empty()) return std::nullopt;
    return resource_header{r.str(0, 0), r.str(0, 1), r.str(0, 2), r.str(0, 3), parse_array(r.text(0, 4))};
  }

  std::optional<std::string> version(std::string_view tenant, std::string_view id, std::string_view version) const override {
    auto r = db_.run(version_get, {tenant, id, version});
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }

  record_page versions(const version_query& q) const override {
    return page_of(db_.run(version_page, {q.tenant, q.resource_id, q.after, limit_of(q.limit + 1)}), q.limit);
  }

  std::vector<resource_position> every(const resource_position& after, std::size_t limit) const override {
    auto r = db_.run(resource_every, {after.tenant, after.id, limit_of(limit)});
    std::vector<resource_position> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back({r.str(i, 0), r.str(i, 1)});
    return out;
  }

  std::map<std::string, std::string> works_of(std::string_view tenant, const std::vector<std::string>& ids) const override {
    std::map<std::string, std::string> out;
    if (ids.empty()) return out;
    auto r = reads_.run(works_of_ids, {tenant, array_literal(ids)});
    for (std::size_t i = 0; i < r.size(); ++i) out.emplace(r.str(i, 0), r.str(i, 1));
    return out;
  }

  std::map<std::string, std::pair<std::string, resource_header>> records_of(
    std::string_view tenant, const std::vector<std::string>& ids) const override {
    std::map<std::string, std::pair<std::string, resource_header>> out;
    if (ids.empty()) return out;
    auto r = reads_.run(resource_wholes, {tenant, array_literal(ids)});
    std::map<std::string, std::string> written_by;
    for (std::size_t i = 0; i < r.size(); ++i) {
      out.emplace(r.str(i, 0), std::make_pair(r.str(i, 1), resource_header{r.str(i, 2), r.str(i, 3), r.str(i, 4),
                                                                             r.str(i, 5), parse_array(r.text(i, 6))}));
      written_by.emplace(r.str(i, 0), r.str(i, 7));
    }
    for (const auto& id : ids) {
      auto found = written_by.find(id);
      remember(tenant, id, found == written_by.end() ? std::optional<std::string>{} : found->second);
    }
    return out;
  }

  record_page list(const resource_query& q) const override {
    auto keep = [&](const std::string&, const resource_item& h) -> std::optional<std::string> {
      bool staged = h.work_id.empty();
      if (!h.readable || !matches(q.work_id, h.work_id) || !matches(q.type, h.type) || !matches(q.language, h.language)
          || (q.staged && *q.staged != staged))
        return std::nullopt;
      return std::string{};  // the record is read with the page's others
    };
    auto chunk = chunk_for(q.limit);
    record_page page;
    if (!q.work_id.empty()) {
      // A Work's Resources through its index; the caller's grants checked in the same statement.
      auto readers = array_literal(q.readable_by);
      resource_stream ids{fetcher(resources_of_work, {q.tenant, q.work_id}, readers), q.after, chunk};
      page = walks::walk(ids, q.limit, q.budget, keep);
    } else if (q.readable_by.empty()) {
      resource_stream ids{fetcher(resources_of_tenant, {q.tenant}, {}), q.after, chunk};
      page = walks::walk(ids, q.limit, q.budget, keep);
    } else {
      // The by-principal grant index gives each principal's Resource ids in order: merging those
      // walks exactly the readable ids after `after`.
      std::vector<resource_stream> streams;
      for (const auto& p : q.readable_by) streams.emplace_back(fetcher(resources_of_principal, {q.tenant, p}, {}), q.after, chunk);
      page = walks::merged_walk(streams, q.limit, q.budget, keep);
    }
    fill_records(reads_, resource_records, q.tenant, page);
    return page;
  }

  std::vector<std::string> referencing(std::string_view tenant, std::string_view blob_id, std::string_view after,
                                       std::size_t limit) const override {
    auto r = reads_.run(blob_refs_page, {tenant, blob_id, after, limit_of(limit)});
    std::vector<std::string> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back(r.str(i, 0));
    return out;
  }

  void put(std::string_view tenant, std::string_view id, const resource_header& h, std::string_view record) override {
    auto blobs = array_literal(h.blobs);
    auto seen = seen_.find(key(tenant, id));
    if (seen == seen_.end()) {
      db_.send(resource_upsert, {tenant, id, h.work_id, h.type, h.language, h.version, blobs, record});
    } else if (!seen->second) {
      db_.send(resource_insert, {tenant, id, h.work_id, h.type, h.language, h.version, blobs, record});
    } else if (db_.run(resource_cas, {tenant, id, h.work_id, h.type, h.language, h.version, blobs, record, *seen->second})
                 .integer(0, 0) == 0) {
      throw conflict("the Resource changed since this write read it");
    }
    // Written: the row is this transaction's until it commits; a later write of it needs no check.
    seen_.erase(key(tenant, id));
    if (touched_) touched_->push_back(key(tenant, id));
  }


  void put_version(std::string_view tenant, std::string_view id, std::string_view version,
                   std::string_view record) override {
    db_.send(version_upsert, {tenant, id, version, record});
  }

private:
  static std::string key(std::string_view tenant, std::string_view id) { return hot_records::key(tenant, id); }

  /// Committed state through the hot-record cache: a miss reserves the key, reads the row whole and
  /// keeps it, unless a commit dropped the key meanwhile. An absent Resource is not kept.
  std::optional<hot_records::entry> cached(std::string_view tenant, std::string_view id) const {
    auto k = hot_records::key(tenant, id);
    if (auto e = hot_->find(k)) return e;
    auto token = hot_->reserve(k);
    auto r = reads_.run(resource_whole_get, {tenant, id});
    if (r.empty()) return std::nullopt;
    hot_records::entry e{r.str(0, 0), {r.str(0, 1), r.str(0, 2), r.str(0, 3), r.str(0, 4), parse_array(r.text(0, 5))}};
    hot_->put(k, e, token);
    return e;
  }

  /// In a write transaction: the row this mutation read, by the transaction that wrote it (`xmin`;
  /// nullopt: read as absent).
  void remember(std::string_view tenant, std::string_view id, std::optional<std::string> written_by) const {
    if (writable_) seen_.emplace(key(tenant, id), std::move(written_by));
  }

  /// Reads a stream's chunks with `s`: its fixed parameters, then after and the chunk size, then
  /// `extra` when not empty.
  resource_stream::fetcher fetcher(const statement& s, std::vector<std::string> fixed, std::string extra) const {
    return [this, &s, fixed = std::move(fixed), extra = std::move(extra)](const std::string& after, std::size_t n) {
      auto size = limit_of(n);
      auto r = fixed.size() == 1 ? reads_.run(s, {fixed[0], after, size})
               : extra.empty()   ? reads_.run(s, {fixed[0], fixed[1], after, size})
                                 : reads_.run(s, {fixed[0], fixed[1], after, size, extra});
      resource_stream::chunk out;
      for (std::size_t i = 0; i < r.size(); ++i)
        out.emplace_back(r.str(i, 0), resource_item{r.str(i, 1), r.str(i, 2), r.str(i, 3), r.text(i, 4) == "t"});
      return out;
    };
  }

  const session& db_;
  const session& reads_;  ///< committed reads a replica may answer (in a transaction: the transaction)
  bool writable_;
  hot_records* hot_;                     ///< committed reads: the cache (nullptr: none)
  std::vector<std::string>* touched_;    ///< a transaction's writes: the keys to drop after it
  mutable std::map<std::string, std::optional<std::string>> seen_;
};

// --- Activities ----------------------------------------------------------------------------------

const statement activity_get{"SELECT record FROM activities WHERE tenant = $1 AND id = $2"};
const statement activity_records{CL_EACH_ID("record", "activities")};
#undef CL_EACH_ID
const statement activities_of_tenant{
  "SELECT id, type FROM activities WHERE tenant = $1 AND id > $2 ORDER BY id LIMIT $3"};
const statement activities_of_resource{
  "SELECT id, type, cardinality($5::text[]) = 0 OR EXISTS (SELECT 1 FROM grants g WHERE g.tenant = a.tenant "
  "AND g.resource_id = a.about_resource AND g.principal = ANY($5::text[])) "
  "FROM activities a WHERE tenant = $1 AND about_resource = $2 AND about_resource <> '' "
  "AND (about_resource, id) > ($2, $3) "
  "ORDER BY id LIMIT $4"};
const statement activities_of_reader{
  "SELECT r.activity_id, a.type FROM activity_readers r "
  "CROSS JOIN LATERAL (SELECT type FROM activities x WHERE x.tenant = r.tenant AND x.id = r.activity_id OFFSET 0) a "
  "WHERE r.tenant = $1 AND r.principal = $2 AND r.activity_id > $3 ORDER BY r.activity_id LIMIT $4"};
// The Activity and its readers in one statement: about no Resource, everyone (`*`); about one, every
// principal that reads the Resource now (grants given later add it then).
const statement activity_upsert{
  "WITH a AS (INSERT INTO activities (tenant, id, about_resource, type, record) VALUES ($1, $2, $3, $4, $5) "
  "ON CONFLICT (tenant, id) DO UPDATE SET about_resource = EXCLUDED.about_resource, type = EXCLUDED.type, "
  "record = EXCLUDED.record) "
  "INSERT INTO activity_readers (tenant, principal, activity_id) "
  "SELECT $1, $6, $2 WHERE $3 = '' UNION ALL "
  "SELECT tenant, principal, $2 FROM grants WHERE $3 <> '' AND tenant = $1 AND resource_id = $3 "
  "ON CONFLICT DO NOTHING"};

struct activity_item {
  std::string type;
  bool readable = true;
};
using activity_stream = walks::id_stream<activity_item>;

class pg_activity_store final : public activity_writes {
public:
  explicit pg_activity_store(const context& c) : db_(c.db) {}

  std::optional<std::string> get(std::string_view tenant, std::string_view id) const override {
    auto r = db_.run(activity_get, {tenant, id});
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }

  record_page list(const activity_query& q) const override {
    auto keep = [&](const std::string&, const activity_item& a) -> std::optional<std::string> {
      if (!a.readable || !matches(q.type, a.type)) return std::nullopt;
      return std::string{};
    };
    auto chunk = chunk_for(q.limit);
    record_page page;
    if (!q.resource_id.empty()) {  // the by-Resource index: only that Resource's Activities
      auto readers = array_literal(q.readable_by);
      activity_stream ids{fetcher(activities_of_resource, {q.tenant, q.resource_id}, readers), q.after, chunk};
      page = walks::walk(ids, q.limit, q.budget, keep);
    } else if (q.readable_by.empty()) {
      activity_stream ids{fetcher(activities_of_tenant, {q.tenant}, {}), q.after, chunk};
      page = walks::walk(ids, q.limit, q.budget, keep);
    } else {
      // The Activities-by-reader index: per principal exactly the Activities it reads, and under
      // `everyone` those about no Resource.
      std::vector<activity_stream> streams;
      for (const auto& p : q.readable_by) streams.emplace_back(fetcher(activities_of_reader, {q.tenant, p}, {}), q.after, chunk);
      streams.emplace_back(fetcher(activities_of_reader, {q.tenant, everyone}, {}), q.after, chunk);
      page = walks::merged_walk(streams, q.limit, q.budget, keep);
    }
    fill_records(db_, activity_records, q.tenant, page);
    return page;
  }

  void put(std::string_view tenant, std::string_view id, const activity_header& h, std::string_view record) override {
    db_.send(activity_upsert, {tenant, id, h.about_resource, h.type, record, everyone});
  }

private:
  activity_stream::fetcher fetcher(const statement& s, std::vector<std::string> fixed, std::string extra) const {
    return [this, &s, fixed = std::move(fixed), extra = std::move(extra)](const std::string& after, std::size_t n) {
      auto size = limit_of(n);
      bool with_readers = &s == &activities_of_resource;
      auto r = fixed.size() == 1 ? db_.run(s, {fixed[0], after, size})
               : with_readers    ? db_.run(s, {fixed[0], fixed[1], after, size, extra})
                                 : db_.run(s, {fixed[0], fixed[1], after, size});
      activity_stream::chunk out;
      for (std::size_t i = 0; i < r.size(); ++i)
        out.emplace_back(r.str(i, 0), activity_item{r.str(i, 1), !with_readers || r.text(i, 2) == "t"});
      return out;
    };
  }

  const session& db_;
};

// --- Catalogue -----------------------------------------------------------------------------------

const statement catalog_get{"SELECT record FROM catalog WHERE kind = $1 AND tenant = $2 AND id = $3"};
const statement catalog_page{
  "SELECT id, record FROM catalog WHERE kind = $1 AND tenant = $2 AND id > $3 ORDER BY id LIMIT $4"};
const statement catalog_upsert{
  "INSERT INTO catalog (kind, tenant, id, record) VALUES ($1, $2, $3, $4) "
  "ON CONFLICT (kind, tenant, id) DO UPDATE SET record = EXCLUDED.record"};
const statement catalog_insert_absent{
  "INSERT INTO catalog (kind, tenant, id, record) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, tenant, id) DO NOTHING"};

std::string kind_number(catalog_kind k) { return std::to_string(static_cast<int>(k)); }

class pg_catalog_store final : public catalog_writes {
public:
  explicit pg_catalog_store(const context& c) : db_(c.db), batch_(c.batch) {}

  std::optional<std::string> get(catalog_kind kind, std::string_view tenant, std::string_view id) const override {
    auto r = db_.run(catalog_get, {kind_number(kind), tenant, id});
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }

  record_page list(const catalog_query& q) const override {
    return page_of(db_.run(catalog_page, {kind_number(q.kind), q.tenant, q.after, limit_of(q.limit + 1)}), q.limit);
  }

  void put(catalog_kind kind, std::string_view tenant, std::string_view id, std::string_view record) override {
    db_.run(catalog_upsert, {kind_number(kind), tenant, id, record});
  }

  /// In the writer's transaction: nothing for a key seen committed; otherwise an INSERT that does
  /// nothing when the row is there, sent without waiting (no round trip), its key learnt at the commit.
  void put_if_absent(catalog_kind kind, std::string_view tenant, std::string_view id, std::string_view record) override {
    if (!batch_) return catalog_writes::put_if_absent(kind, tenant, id, record);
    auto key = kind_number(kind);
    key.push_back('\0');
    key.append(tenant).push_back('\0');
    key.append(id);
    if (batch_->lasting && batch_->lasting->has(key)) return;
    db_.send(catalog_insert_absent, {kind_number(kind), tenant, id, record});
    batch_->ensured.push_back(std::move(key));
  }

private:
  const session& db_;
  batch_hooks* batch_;
};

}  // namespace

const bool resources_implemented = implement<resource_writes, pg_resource_store>();
const bool activities_implemented = implement<activity_writes, pg_activity_store>();
const bool catalog_implemented = implement<catalog_writes, pg_catalog_store>();

}  // namespace cl::storage::pg
