#include "storage/grant_store.hpp"

#include "storage/record_store.hpp"

namespace cl::storage {

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
  kv_grant_store(const read_view& reads, write_txn* writes) : r_(reads), w_(writes) {}

  std::optional<domain::access_role> role(std::string_view tenant, std::string_view principal,
                                          std::string_view resource) const override {
    auto name = r_.get(table::grants_by_principal, by_principal(tenant, principal, resource));
    if (!name) return std::nullopt;
    return domain::parse_role(*name);
  }

  std::optional<std::string> grant(std::string_view tenant, std::string_view resource,
                                   std::string_view principal) const override {
    return r_.get(table::grants, by_resource(tenant, resource, principal));
  }

  record_page on_resource(const grant_query& q) const override {
    record_page page;
    auto prefix = by_resource(q.tenant, q.resource_id, "");
    auto entries = r_.scan(table::grants, prefix, q.after.empty() ? std::string{} : prefix + q.after, q.limit);
    for (auto& [key, value] : entries) {
      page.resume_after = key.substr(prefix.size());
      page.entries.emplace_back(page.resume_after, std::move(value));
    }
    page.exhausted = entries.size() < q.limit;
    return page;
  }

  bool another_owner(std::string_view tenant, std::string_view resource, std::string_view principal) const override {
    auto prefix = by_resource(tenant, resource, "");
    std::string after;
    for (;;) {
      auto entries = r_.scan(table::grants, prefix, after, 256);
      for (const auto& [key, value] : entries) {
        auto p = std::string_view{key}.substr(prefix.size());
        if (p != principal && role(tenant, p, resource) == domain::access_role::owner) return true;
      }
      if (entries.size() < 256) return false;
      after = entries.back().first;
    }
  }

  void put(std::string_view tenant, const domain::access_grant& g) override {
    w_->put(table::grants, by_resource(tenant, g.resource_id, g.principal), domain::grant_json(g));
    w_->put(table::grants_by_principal, by_principal(tenant, g.principal, g.resource_id),
            std::string{domain::role_name(g.role)});
  }

  void erase(std::string_view tenant, std::string_view resource, std::string_view principal) override {
    w_->erase(table::grants, by_resource(tenant, resource, principal));
    w_->erase(table::grants_by_principal, by_principal(tenant, principal, resource));
  }

private:
  const read_view& r_;
  write_txn* w_;
};

}  // namespace

std::unique_ptr<grant_writes> make_kv_grant_store(const read_view& reads, write_txn* writes) {
  return std::make_unique<kv_grant_store>(reads, writes);
}

}  // namespace cl::storage
