#pragma once
/// The typed stores of the content records: Resources (with their snapshots), Activities, and the
/// catalogue records (Works, Sources, Agents). Each owns its key layout and secondary indexes; the
/// actors never see a table or a key.
///
/// SQL mapping (storage/postgresql/):
/// - `resources(tenant, id, work_id, type, language, version, record)` keyed (tenant, id);
///   `resource_versions(tenant, id, version, record)` keyed (tenant, id, version). `list` with
///   `readable_by` = `JOIN grants ON (tenant, resource_id) WHERE principal = ANY($p) AND id > $after
///   [AND work_id = ...] ORDER BY id LIMIT $n` (the grants index on (tenant, principal, resource_id)).
/// - `activities(tenant, id, about_resource, type, record)` keyed (tenant, id), indexed on
///   (tenant, about_resource, id); `list` by resource walks that index.
/// - `catalog(kind, tenant, id, record)` keyed (kind, tenant, id), or one table per kind.

#include "storage/copyable.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::storage {

struct record_page;
struct resource_query;
struct activity_query;

/// A stored Resource record's own members that callers need, read from a record in hand (the
/// domain writes records with their own members first, content last): its Work (empty when
/// staged) and its current version.
struct resource_fields {
  std::string work_id;
  std::string version;
};
resource_fields fields_of(std::string_view resource_record);

/// The typed header stored beside a Resource's canonical JSON: what lists filter on and what
/// writes check, so the store never searches the JSON for a field (format 4).
struct resource_header {
  std::string work_id;  ///< empty: staged
  std::string type;
  std::string language;
  std::string version;
  std::vector<std::string> blobs;  ///< the blb_ ids its content's image blocks reference, sorted
  bool operator==(const resource_header& o) const {
    return work_id == o.work_id && type == o.type && language == o.language && version == o.version
           && blobs == o.blobs;
  }
};

/// The typed header stored beside an Activity's canonical JSON.
struct activity_header {
  std::string about_resource;  ///< the Resource it is about; empty for Works and contracts
  std::string type;            ///< CREATION, UPDATE, PROMOTION, ...
};

/// The Resource an Activity record is about (its target), or empty for Works and contracts.
std::string activity_about(std::string_view activity_record);

/// A Resource's snapshot to read.
struct version_ref {
  std::string tenant;
  std::string resource_id;
  std::string version;
};

/// An Activity to read.
struct activity_ref {
  std::string tenant;
  std::string id;
};

/// One Resource's snapshots, oldest first; entry ids are the version ids.
struct version_query {
  std::string tenant;
  std::string resource_id;
  std::string after;  ///< resume after this version id
  std::size_t limit = 50;
};

/// A place in a walk over every tenant's Resources, in (tenant, id) order: after this Resource
/// (both empty: from the start).
struct resource_position {
  std::string tenant;
  std::string id;
};

/// A position as a migration keeps it (storage/copyable.hpp), and back (empty: from the start).
std::string position_text(const resource_position& p);
resource_position position_from_text(const std::string& text);

class resource_writes;

/// Resources and their snapshots.
class resource_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = resource_writes;
  virtual std::optional<std::string> get(std::string_view tenant, std::string_view id) const = 0;
  /// The typed header of `id`'s current record, without reading its JSON.
  virtual std::optional<resource_header> header(std::string_view tenant, std::string_view id) const = 0;
  /// The snapshot of `id` at `version`.
  virtual std::optional<std::string> version(std::string_view tenant, std::string_view id,
                                             std::string_view version) const = 0;
  virtual record_page versions(const version_query& q) const = 0;
  virtual record_page list(const resource_query& q) const = 0;
  /// Up to `limit` ids of the Resources whose current content references `blob_id`, in id order
  /// after `after` (the blob-to-Resource index the store keeps with every put).
  virtual std::vector<std::string> referencing(std::string_view tenant, std::string_view blob_id,
                                               std::string_view after, std::size_t limit) const = 0;
  /// Up to `limit` Resources of every tenant after `after`, in (tenant, id) order (the search index
  /// rebuild walks the whole store this way).
  virtual std::vector<resource_position> every(const resource_position& after, std::size_t limit) const = 0;
  /// The Work of each of `ids` that exists (empty: staged): for a page of the change feed at once
  /// (a header read each on the key-value stores, one statement on PostgreSQL).
  virtual std::map<std::string, std::string> works_of(std::string_view tenant, const std::vector<std::string>& ids) const;
  /// The record and typed header of each of `ids` that exists: a batch of the search indexer at
  /// once (two reads each on the key-value stores, one statement on PostgreSQL).
  virtual std::map<std::string, std::pair<std::string, resource_header>> records_of(
    std::string_view tenant, const std::vector<std::string>& ids) const;
};

class resource_writes : public resource_reads {
public:
  /// Stores the Resource's current record (create, replace, promotion) with its typed header,
  /// which must describe `record`.
  virtual void put(std::string_view tenant, std::string_view id, const resource_header& header,
                   std::string_view record) = 0;
  /// Keeps `record` as the snapshot of `id` at `version`.
  virtual void put_version(std::string_view tenant, std::string_view id, std::string_view version,
                           std::string_view record) = 0;
};

class activity_writes;

/// Activities, with an index by the Resource each is about.
class activity_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = activity_writes;
  virtual std::optional<std::string> get(std::string_view tenant, std::string_view id) const = 0;
  /// A page of Activities; with `resource_id` set, the by-Resource index drives it.
  virtual record_page list(const activity_query& q) const = 0;
};

class activity_writes : public activity_reads {
public:
  /// Stores an Activity; `header.about_resource` (empty for Works and contracts) feeds the index.
  virtual void put(std::string_view tenant, std::string_view id, const activity_header& header,
                   std::string_view record) = 0;
};

/// The kinds of catalogue record: records of a tenant looked up by id, written whole.
enum class catalog_kind : std::uint8_t { work, source, agent };

/// A catalogue record to read.
struct record_ref {
  catalog_kind kind = catalog_kind::work;
  std::string tenant;
  std::string id;
};

/// A page of one kind's records of a tenant, in id order.
struct catalog_query {
  catalog_kind kind = catalog_kind::work;
  std::string tenant;
  std::string after;
  std::size_t limit = 50;
};

class catalog_writes;

class catalog_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = catalog_writes;
  virtual std::optional<std::string> get(catalog_kind kind, std::string_view tenant, std::string_view id) const = 0;
  virtual record_page list(const catalog_query& q) const = 0;
};

class catalog_writes : public catalog_reads {
public:
  virtual void put(catalog_kind kind, std::string_view tenant, std::string_view id, std::string_view record) = 0;
  /// Writes `record` unless the catalog holds a record under `kind`/`id` already. Nothing removes a
  /// catalog record, so a backend may skip even the look-up for a key it has seen committed.
  virtual void put_if_absent(catalog_kind kind, std::string_view tenant, std::string_view id, std::string_view record) {
    if (!get(kind, tenant, id)) put(kind, tenant, id, record);
  }
};

/// Headers derived from a record's JSON (the LMDB format 3 -> 4 migration, `contentlake migrate`).
resource_header resource_header_from_json(std::string_view json);
activity_header activity_header_from_json(std::string_view json);

}  // namespace cl::storage
