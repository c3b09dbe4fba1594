#include "storage/grant_store.hpp"

#include "storage/every_record.hpp"
#include "storage/record_store.hpp"

#include <stdexcept>

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

namespace {

std::string grant_text(const grant_ref& g) { return copy_position::join({g.tenant, g.resource_id, g.principal}); }

grant_ref grant_from_text(const std::string& text) {
  return {copy_position::part(text, 0), copy_position::part(text, 1), copy_position::part(text, 2)};
}

}  // namespace

std::vector<record_kind> grant_reads::record_kinds() const {
  return {{"grants", 50,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto gs = every_record(from).grants(grant_from_text(after), copy_page_size);
             for (const auto& g : gs)
               if (auto record = from.grants().grant(g.tenant, g.resource_id, g.principal)) {
                 auto parsed = domain::parse_grant(*record);
                 if (!parsed) throw std::runtime_error("grant on " + g.resource_id + " cannot be read");
                 page.writes.push_back([tenant = g.tenant, grant = *parsed](write_txn& tx) { tx.grants().put(tenant, grant); });
               }
             return finished(std::move(page), gs, grant_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(every_record(s).grants(grant_from_text(after), copy_page_size), grant_text);
           },
           [](const read_view& s, const std::string& key) {
             auto g = grant_from_text(key);
             return s.grants().grant(g.tenant, g.resource_id, g.principal);
           }}};
}

}  // namespace cl::storage
