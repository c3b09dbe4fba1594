#include "storage/grant_store.hpp"

namespace cl::storage {

bool holds_any_grant(const grant_reads& grants, std::string_view tenant, const std::vector<std::string>& principals,
                     std::string_view resource) {
  for (const auto& p : principals)
    if (grants.role(tenant, p, resource)) return true;
  return false;
}

}  // namespace cl::storage
