#pragma once
/// The typed stores of the content records: Resources (with their snapshots), Activities, and the
/// catalogue records (Works, Sources, Agents). Each owns its key layout and secondary indexes; the
/// actors never see a table or a key.
///
/// SQL mapping (a PostgreSQL implementation is an addition):
/// - `resources(tenant, id, work_id, type, language, version, record)` keyed (tenant, id);
///   `resource_versions(tenant, id, version, record)` keyed (tenant, id, version). `list` with
///   `readable_by` = `JOIN grants ON (tenant, resource_id) WHERE principal = ANY($p) AND id > $after
///   [AND work_id = ...] ORDER BY id LIMIT $n` (the grants index on (tenant, principal, resource_id)).
/// - `activities(tenant, id, about_resource, type, record)` keyed (tenant, id), indexed on
///   (tenant, about_resource, id); `list` by resource walks that index.
/// - `catalog(kind, tenant, id, record)` keyed (kind, tenant, id), or one table per kind.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cl::storage {

struct record_page;
struct resource_query;
struct activity_query;
class read_view;
class write_txn;

/// A stored Resource record's own members that callers need (read by the store, which owns the
/// record's layout): its Work (empty when staged) and its current version.
struct resource_fields {
  std::string work_id;
  std::string version;
};
resource_fields fields_of(std::string_view resource_record);

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

/// Resources and their snapshots.
class resource_reads {
public:
  virtual ~resource_reads() = default;
  virtual std::optional<std::string> get(std::string_view tenant, std::string_view id) const = 0;
  /// The snapshot of `id` at `version`.
  virtual std::optional<std::string> version(std::string_view tenant, std::string_view id,
                                             std::string_view version) const = 0;
  virtual record_page versions(const version_query& q) const = 0;
  virtual record_page list(const resource_query& q) const = 0;
};

class resource_writes : public resource_reads {
public:
  /// Stores the Resource's current record (create, replace, promotion).
  virtual void put(std::string_view tenant, std::string_view id, std::string_view record) = 0;
  /// Keeps `record` as the snapshot of `id` at `version`.
  virtual void put_version(std::string_view tenant, std::string_view id, std::string_view version,
                           std::string_view record) = 0;
};

/// Activities, with an index by the Resource each is about.
class activity_reads {
public:
  virtual ~activity_reads() = default;
  virtual std::optional<std::string> get(std::string_view tenant, std::string_view id) const = 0;
  /// A page of Activities; with `resource_id` set, the by-Resource index drives it.
  virtual record_page list(const activity_query& q) const = 0;
};

class activity_writes : public activity_reads {
public:
  /// Stores an Activity; `about_resource` (empty for Works and contracts) feeds the index.
  virtual void put(std::string_view tenant, std::string_view id, std::string_view about_resource,
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

class catalog_reads {
public:
  virtual ~catalog_reads() = default;
  virtual std::optional<std::string> get(catalog_kind kind, std::string_view tenant, std::string_view id) const = 0;
  virtual record_page list(const catalog_query& q) const = 0;
};

class catalog_writes : public catalog_reads {
public:
  virtual void put(catalog_kind kind, std::string_view tenant, std::string_view id, std::string_view record) = 0;
};

/// The stores over a read view's tables (the LMDB layout); writes only with `writes`.
std::unique_ptr<resource_writes> make_kv_resource_store(const read_view& reads, write_txn* writes);
std::unique_ptr<activity_writes> make_kv_activity_store(const read_view& reads, write_txn* writes);
std::unique_ptr<catalog_writes> make_kv_catalog_store(const read_view& reads, write_txn* writes);

}  // namespace cl::storage
