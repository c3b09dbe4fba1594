#include "storage/grant_store.hpp"

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

}  // namespace cl::storage
