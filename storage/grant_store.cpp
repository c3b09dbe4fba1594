#include "storage/grant_store.hpp"

#include "storage/record_store.hpp"

namespace cl::storage {

bool holds_any_grant(const grant_reads& grants, std::string_view tenant, const std::vector<std::string>& principals,
                     std::string_view resource) {
  for (const auto& p : principals)
    if (grants.role(tenant, p, resource)) return true;
  return false;
}

std::set<std::string> grant_reads::readable_among(std::string_view tenant, const std::vector<std::string>& principals,
                                                  const std::vector<std::string>& resources) const {
  std::set<std::string> out;
  for (const auto& r : resources)
    if (!out.count(r) && holds_any_grant(*this, tenant, principals, r)) out.insert(r);
  return out;
}

std::map<std::string, std::vector<std::string>> grant_reads::principals_on(
  std::string_view tenant, const std::vector<std::string>& resources) const {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& r : resources) {
    if (out.count(r)) continue;
    grant_query q;
    q.tenant = std::string{tenant};
    q.resource_id = r;
    q.limit = 1000;
    std::vector<std::string> principals;
    for (;;) {
      auto page = on_resource(q);
      for (const auto& [principal, grant] : page.entries) principals.push_back(principal);
      if (page.entries.size() < q.limit) break;
      q.after = page.entries.back().first;
    }
    if (!principals.empty()) out.emplace(r, std::move(principals));
  }
  return out;
}

}  // namespace cl::storage
