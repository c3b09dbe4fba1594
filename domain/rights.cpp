#include "domain/rights.hpp"

#include "domain/json_text.hpp"

namespace cl::domain {

resolved_rights no_contract_rights(std::string_view resolved_at) {
  static const std::string terms =
    R"("usable":false,"contracts":[],"territorial_rights":[],"manifestation_rights":[],"usage_terms":[],)"
    R"("handling_terms":[],"basis":[])";
  resolved_rights r;
  r.digest_input = "{" + terms + "}";
  r.json = "{" + terms + ",\"resolved_at\":" + json_string(resolved_at) + "}";
  return r;
}

}  // namespace cl::domain
