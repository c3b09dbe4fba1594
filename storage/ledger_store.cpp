#include "storage/ledger_store.hpp"

#include "storage/every_record.hpp"
#include "storage/record_store.hpp"

namespace cl::storage {

namespace {

std::string key_text(const domain::ledger_key& k) { return copy_position::join({k.tenant, k.client_id, k.key}); }

domain::ledger_key key_from_text(const std::string& text) {
  return {copy_position::part(text, 0), copy_position::part(text, 1), copy_position::part(text, 2)};
}

}  // namespace

std::vector<record_kind> ledger_reads::record_kinds() const {
  return {{"ledger", 60,
           [](const read_view& from, const std::string& after) {
             copied_page page;
             auto keys = every_record(from).ledger(key_from_text(after), copy_page_size);
             for (const auto& k : keys)
               if (auto record = from.ledger().record(k)) {
                 auto parsed = domain::parse_ledger_record(*record);
                 page.writes.push_back([k, created = parsed ? parsed->created_ms : 0, record = *record](write_txn& tx) {
                   if (!tx.ledger().record(k)) tx.ledger().put(k, created, record);  // a resumed page: once
                 });
               }
             return finished(std::move(page), keys, key_text);
           },
           [](const read_view& s, const std::string& after) {
             return keys_of(every_record(s).ledger(key_from_text(after), copy_page_size), key_text);
           },
           [](const read_view& s, const std::string& key) { return s.ledger().record(key_from_text(key)); }}};
}

}  // namespace cl::storage
