#include "storage/contract_store.hpp"

#include "domain/contract.hpp"
#include "storage/content_stores.hpp"
#include "storage/every_record.hpp"
#include "storage/record_store.hpp"

#include <stdexcept>

namespace cl::storage {

namespace {

/// Every version of a contract, oldest first: (number, record).
std::vector<std::pair<std::string, std::string>> contract_versions(const read_view& v, const resource_position& c) {
  std::vector<std::pair<std::string, std::string>> out;
  contract_versions_query q{c.tenant, c.id, {}, copy_page_size};
  for (;;) {
    auto page = v.contracts().versions(q);
    for (auto& e : page.entries) out.push_back(std::move(e));
    if (page.exhausted || page.entries.empty()) return out;
    q.after = page.resume_after;
  }
}

}  // namespace

std::vector<record_kind> contract_reads::record_kinds() const {
  // A contract is copied with every version, each written as it was (status, Works, record).
  return {{"contracts", 20,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto ps = every_record(from).contracts(position_from_text(after), copy_page_size);
             for (const auto& p : ps)
               for (auto& [number, record] : contract_versions(from, p)) {
                 auto view = domain::contract_view_of(record);
                 if (!view) throw std::runtime_error("contract " + p.id + " version " + number + " cannot be read");
                 page.writes.push_back([p, n = std::stoll(number), status = view->status, works = view->work_ids,
                                        record = std::move(record)](write_txn& tx) {
                   tx.contracts().put_version(p.tenant, p.id, n, status, works, record);
                 });
               }
             return finished(std::move(page), ps, position_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(every_record(s).contracts(position_from_text(after), copy_page_size), position_text);
           },
           [](const read_view& s, const std::string& key) -> std::optional<std::string> {
             std::string all;
             for (const auto& [n, record] : contract_versions(s, position_from_text(key))) all += n + ":" + record + "\n";
             return all;
           }}};
}

}  // namespace cl::storage
