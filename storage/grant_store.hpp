#pragma once
/// The grant store: access grants on Resources (layer 2), kept twice in one transaction: by
/// Resource (the grant records, for the grant routes and the last-owner rule) and by principal
/// (the role, for checks and for list queries that walk what a principal may read). It owns both
/// key layouts.
///
/// SQL mapping: `grants(tenant, resource_id, principal, role, record)` with primary key
/// (tenant, resource_id, principal) and an index on (tenant, principal, resource_id). `role` is a
/// point SELECT on the index; `on_resource` = `WHERE tenant = $1 AND resource_id = $2 AND principal >
/// $after ORDER BY principal LIMIT $n`; `another_owner` = `EXISTS (... role = 'owner' AND principal <> $p)`.

#include "domain/access.hpp"

#include "storage/copyable.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cl::storage {

struct record_page;

/// The grants on one Resource, in principal order; entry ids are the principals.
struct grant_query {
  std::string tenant;
  std::string resource_id;
  std::string after;  ///< resume after this principal
  std::size_t limit = 50;
};

/// One grant: `principal`'s on `resource_id`.
struct grant_ref {
  std::string tenant;
  std::string resource_id;
  std::string principal;
};

class grant_writes;

/// Reads of grants, as a snapshot or a write transaction sees them.
class grant_reads : public copyable_store {
public:
  /// Its kinds of record, copied and compared by `contentlake migrate` (storage/copyable.hpp).
  std::vector<record_kind> record_kinds() const override;
  using writes = grant_writes;
  /// The role `principal` holds on `resource` by its own grant (groups are the caller's concern).
  virtual std::optional<domain::access_role> role(std::string_view tenant, std::string_view principal,
                                                  std::string_view resource) const = 0;
  /// The stored record of `principal`'s grant on `resource`.
  virtual std::optional<std::string> grant(std::string_view tenant, std::string_view resource,
                                           std::string_view principal) const = 0;
  /// A page of the grants on a Resource.
  virtual record_page on_resource(const grant_query& q) const = 0;
  /// True when `resource` has an owner other than `principal`.
  virtual bool another_owner(std::string_view tenant, std::string_view resource, std::string_view principal) const = 0;
  /// Of `resources`, those on which one of `principals` holds a grant: layer 2 for a page of the
  /// change feed at once (a point read per pair on the key-value stores, one statement on
  /// PostgreSQL).
  virtual std::set<std::string> readable_among(std::string_view tenant, const std::vector<std::string>& principals,
                                               const std::vector<std::string>& resources) const;
  /// The principals holding a grant on each of `resources` (none: absent), in principal order: a
  /// batch of the search indexer at once (pages of grants each on the key-value stores, one
  /// statement on PostgreSQL).
  virtual std::map<std::string, std::vector<std::string>> principals_on(std::string_view tenant,
                                                                       const std::vector<std::string>& resources) const;
};

/// Writes of grants, inside the writer's transaction.
class grant_writes : public grant_reads {
public:
  /// Makes or replaces `g` (both indexes).
  virtual void put(std::string_view tenant, const domain::access_grant& g) = 0;
  /// Removes `principal`'s grant on `resource` (both indexes).
  virtual void erase(std::string_view tenant, std::string_view resource, std::string_view principal) = 0;
};

/// Layer 2 now: whether one of `principals` (a caller and its groups) holds a grant on Resource
/// `resource` of `tenant` (any role reads). A point read per principal.
bool holds_any_grant(const grant_reads& grants, std::string_view tenant, const std::vector<std::string>& principals,
                     std::string_view resource);

}  // namespace cl::storage
