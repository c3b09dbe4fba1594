// Grants in SQL: `grants(tenant, resource_id, principal, role, record)`, its primary key by
// Resource and an index by principal. A principal that gains (loses) its grant on a Resource gains
// (loses) the Resource's Activities in `activity_readers` in the same statement sequence. A
// statement by `about_resource` says `about_resource <> ''`: the index by Resource is partial, and
// a prepared statement's generic plan could not use it otherwise (it scanned the tenant's
// Activities on every grant).

#include "storage/grant_store.hpp"

#include "storage/postgresql/backend.hpp"

namespace cl::storage::pg {

namespace {

const statement get_role{"SELECT role FROM grants WHERE tenant = $1 AND principal = $2 AND resource_id = $3"};
const statement get_grant{"SELECT record FROM grants WHERE tenant = $1 AND resource_id = $2 AND principal = $3"};
const statement page_on_resource{
  "SELECT principal, record FROM grants WHERE tenant = $1 AND resource_id = $2 AND (resource_id, principal) > ($2, $3) "
  "ORDER BY principal LIMIT $4"};
// One probe of (tenant, resource) per Resource asked (content_stores.cpp says why not `= ANY`).
const statement principals_of{
  "SELECT g.resource_id, g.principal FROM (SELECT DISTINCT unnest($2::text[]) AS id) k CROSS JOIN LATERAL "
  "(SELECT resource_id, principal FROM grants x WHERE x.tenant = $1 AND x.resource_id = k.id OFFSET 0) g "
  "ORDER BY 1, 2"};
const statement other_owner{
  "SELECT EXISTS (SELECT 1 FROM grants WHERE tenant = $1 AND resource_id = $2 AND role = $3 AND principal <> $4)"};
// In a write, the grant read and the other owners found stay this transaction's to its commit: two
// owners demoting or removing each other at once through two nodes or lanes cannot both see the
// other still an owner (one waits, or loses a deadlock and runs again, and then refuses).
const statement get_grant_locked{
  "SELECT record FROM grants WHERE tenant = $1 AND resource_id = $2 AND principal = $3 FOR UPDATE"};
const statement other_owner_locked{
  "SELECT 1 FROM grants WHERE tenant = $1 AND resource_id = $2 AND role = $3 AND principal <> $4 FOR UPDATE"};
const statement readable_of{
  "SELECT DISTINCT g.resource_id FROM unnest($2::text[]) AS k(id) CROSS JOIN LATERAL "
  "(SELECT resource_id FROM grants x WHERE x.tenant = $1 AND x.resource_id = k.id AND x.principal = ANY($3::text[]) "
  "OFFSET 0) g"};
// The grant, and when it is new (xmax = 0: PostgreSQL's own mark of a row this statement inserted
// rather than updated) its principal as a reader of the Resource's Activities: a role change
// changes nothing there.
const statement upsert_grant{
  "WITH g AS (INSERT INTO grants (tenant, resource_id, principal, role, record) VALUES ($1, $2, $3, $4, $5) "
  "ON CONFLICT (tenant, resource_id, principal) DO UPDATE SET role = EXCLUDED.role, record = EXCLUDED.record "
  "RETURNING (xmax = 0) AS new) "
  "INSERT INTO activity_readers (tenant, principal, activity_id) SELECT a.tenant, $3, a.id FROM activities a, g "
  "WHERE g.new AND a.tenant = $1 AND a.about_resource = $2 AND a.about_resource <> '' ON CONFLICT DO NOTHING"};
const statement delete_grant{"DELETE FROM grants WHERE tenant = $1 AND resource_id = $2 AND principal = $3"};
const statement readers_remove{
  "DELETE FROM activity_readers WHERE tenant = $1 AND principal = $2 AND activity_id IN "
  "(SELECT id FROM activities WHERE tenant = $1 AND about_resource = $3 AND about_resource <> '')"};

class pg_grant_store final : public grant_writes {
public:
  explicit pg_grant_store(const context& c) : db_(c.reads()), writable_(c.writable) {}

  std::optional<domain::access_role> role(std::string_view tenant, std::string_view principal,
                                          std::string_view resource) const override {
    auto r = db_.run(get_role, {tenant, principal, resource});
    if (r.empty()) return std::nullopt;
    return domain::parse_role(r.text(0, 0));
  }

  std::optional<std::string> grant(std::string_view tenant, std::string_view resource,
                                   std::string_view principal) const override {
    auto r = db_.run(writable_ ? get_grant_locked : get_grant, {tenant, resource, principal});
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }

  record_page on_resource(const grant_query& q) const override {
    record_page page;
    auto r = db_.run(page_on_resource, {q.tenant, q.resource_id, q.after, num(static_cast<std::uint64_t>(q.limit))});
    for (std::size_t i = 0; i < r.size(); ++i) {
      page.resume_after = r.str(i, 0);
      page.entries.emplace_back(page.resume_after, r.str(i, 1));
    }
    page.exhausted = r.size() < q.limit;
    return page;
  }

  bool another_owner(std::string_view tenant, std::string_view resource, std::string_view principal) const override {
    auto owner = domain::role_name(domain::access_role::owner);
    if (writable_) return !db_.run(other_owner_locked, {tenant, resource, owner, principal}).empty();
    return db_.run(other_owner, {tenant, resource, owner, principal}).text(0, 0) == "t";
  }

  std::set<std::string> readable_among(std::string_view tenant, const std::vector<std::string>& principals,
                                       const std::vector<std::string>& resources) const override {
    std::set<std::string> out;
    if (principals.empty() || resources.empty()) return out;
    auto r = db_.run(readable_of, {tenant, array_literal(resources), array_literal(principals)});
    for (std::size_t i = 0; i < r.size(); ++i) out.insert(r.str(i, 0));
    return out;
  }

  std::map<std::string, std::vector<std::string>> principals_on(std::string_view tenant,
                                                               const std::vector<std::string>& resources) const override {
    std::map<std::string, std::vector<std::string>> out;
    if (resources.empty()) return out;
    auto r = db_.run(principals_of, {tenant, array_literal(resources)});
    for (std::size_t i = 0; i < r.size(); ++i) out[r.str(i, 0)].push_back(r.str(i, 1));
    return out;
  }

  void put(std::string_view tenant, const domain::access_grant& g) override {
    db_.send(upsert_grant, {tenant, g.resource_id, g.principal, domain::role_name(g.role), domain::grant_json(g)});
  }

  void erase(std::string_view tenant, std::string_view resource, std::string_view principal) override {
    bool had = role(tenant, principal, resource).has_value();
    db_.run(delete_grant, {tenant, resource, principal});
    if (had) db_.run(readers_remove, {tenant, principal, resource});
  }

private:
  const session& db_;
  bool writable_;
};

}  // namespace

const bool grants_implemented = implement<grant_writes, pg_grant_store>();

}  // namespace cl::storage::pg
