#include "storage/grant_store.hpp"

#include "storage/kv/kv.hpp"
#include "storage/stores.hpp"
#include "storage/kv/activity_readers.hpp"

namespace cl::storage {

using kv::big_endian_key;
using kv::tenant_key;

/// The tables this file owns or reads (declared by name: another file naming one shares it).
namespace tables {
const kv::table grants = kv::declare_table("grants");
const kv::table grants_by_principal = kv::declare_table("grants_by_principal");
}  // namespace tables

namespace {

/// Key layout: `grants` tenant\0resource\0principal -> record; `grants_by_principal`
/// tenant\0principal\0resource -> role name.
std::string by_resource(std::string_view tenant, std::string_view resource, std::string_view principal) {
  return tenant_key(tenant, std::string{resource} + '\0' + std::string{principal});
}

std::string by_principal(std::string_view tenant, std::string_view principal, std::string_view resource) {
  return tenant_key(tenant, std::string{principal} + '\0' + std::string{resource});
}

class kv_grant_store final : public grant_writes {
public:
  explicit kv_grant_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<domain::access_role> role(std::string_view tenant, std::string_view principal,
                                          std::string_view resource) const override {
    require_storable({tenant, principal, resource});
    auto name = r_.get(tables::grants_by_principal, by_principal(tenant, principal, resource));
    if (!name) return std::nullopt;
    return domain::parse_role(*name);
  }

  std::optional<std::string> grant(std::string_view tenant, std::string_view resource,
                                   std::string_view principal) const override {
    require_storable({tenant, resource, principal});
    return r_.get(tables::grants, by_resource(tenant, resource, principal));
  }

  record_page on_resource(const grant_query& q) const override {
    record_page page;
    auto prefix = by_resource(q.tenant, q.resource_id, "");
    // After the empty principal even from the start, as on PostgreSQL.
    auto entries = r_.scan(tables::grants, prefix, prefix + q.after, q.limit);
    for (auto& [key, value] : entries) {
      page.resume_after = key.substr(prefix.size());
      page.entries.emplace_back(page.resume_after, std::move(value));
    }
    page.exhausted = entries.size() < q.limit;
    return page;
  }

  bool another_owner(std::string_view tenant, std::string_view resource, std::string_view principal) const override {
    require_storable({tenant, resource, principal});
    auto prefix = by_resource(tenant, resource, "");
    std::string after;
    for (;;) {
      auto entries = r_.scan(tables::grants, prefix, after, 256);
      for (const auto& [key, value] : entries) {
        auto p = std::string_view{key}.substr(prefix.size());
        if (p != principal && role(tenant, p, resource) == domain::access_role::owner) return true;
      }
      if (entries.size() < 256) return false;
      after = entries.back().first;
    }
  }

  void put(std::string_view tenant, const domain::access_grant& g) override {
    require_storable({tenant, g.resource_id, g.principal, g.granted_by, g.granted_at});
    bool had = r_.get(tables::grants_by_principal, by_principal(tenant, g.principal, g.resource_id)).has_value();
    w_->put(tables::grants, by_resource(tenant, g.resource_id, g.principal), domain::grant_json(g));
    w_->put(tables::grants_by_principal, by_principal(tenant, g.principal, g.resource_id),
            std::string{domain::role_name(g.role)});
    // A new reader of the Resource reads its Activities too (a role change changes nothing there).
    if (!had) kv::index_resource_activities(r_, *w_, tenant, g.resource_id, g.principal, true);
  }

  void erase(std::string_view tenant, std::string_view resource, std::string_view principal) override {
    require_storable({tenant, resource, principal});
    bool had = r_.get(tables::grants_by_principal, by_principal(tenant, principal, resource)).has_value();
    w_->erase(tables::grants, by_resource(tenant, resource, principal));
    w_->erase(tables::grants_by_principal, by_principal(tenant, principal, resource));
    if (had) kv::index_resource_activities(r_, *w_, tenant, resource, principal, false);
  }

private:
  const kv::reader& r_;
  kv::writer* w_;
};

}  // namespace

const bool implemented = kv::implement<grant_writes, kv_grant_store>();

}  // namespace cl::storage
