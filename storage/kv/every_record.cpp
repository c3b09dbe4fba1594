// Every record of every kind on the key-value backends: scans of each store's primary table in key
// order (the key layouts of storage/kv/*_store.cpp), for `contentlake migrate`.

#include "storage/every_record.hpp"

#include "storage/kv/kv.hpp"
#include "storage/kv/ledger_keys.hpp"
#include "storage/record_codecs.hpp"

namespace cl::storage {

namespace {

namespace tables {
const kv::table activities = kv::declare_table("activities");
const kv::table works = kv::declare_table("works");
const kv::table sources = kv::declare_table("sources");
const kv::table agents = kv::declare_table("agents");
const kv::table contracts = kv::declare_table("contracts");
const kv::table grants = kv::declare_table("grants");
const kv::table ledger = kv::declare_table("ledger");
const kv::table blob_uploads = kv::declare_table("blob_uploads");
const kv::table blob_versions = kv::declare_table("blob_versions");
const kv::table webhooks = kv::declare_table("webhooks");
}  // namespace tables

/// A key's NUL-separated parts.
std::vector<std::string> parts(std::string_view key) {
  std::vector<std::string> out;
  for (;;) {
    auto cut = key.find('\0');
    out.emplace_back(key.substr(0, cut));
    if (cut == std::string_view::npos) return out;
    key.remove_prefix(cut + 1);
  }
}

/// The key of a (tenant, id) position; empty at the start.
std::string position_key(const resource_position& p) {
  return p.tenant.empty() && p.id.empty() ? std::string{} : kv::tenant_key(p.tenant, p.id);
}

class kv_every_record final : public every_record_writes {
public:
  explicit kv_every_record(const kv::context& c) : r_(c.r), w_(c.w), next_seq_(c.next_seq) {}

  std::vector<resource_position> activities(const resource_position& after, std::size_t limit) const override {
    return positions(tables::activities, after, limit);
  }

  std::vector<resource_position> catalog(catalog_kind kind, const resource_position& after,
                                         std::size_t limit) const override {
    auto t = kind == catalog_kind::work ? tables::works : kind == catalog_kind::source ? tables::sources : tables::agents;
    return positions(t, after, limit);
  }

  std::vector<resource_position> contracts(const resource_position& after, std::size_t limit) const override {
    return positions(tables::contracts, after, limit);
  }

  std::vector<grant_ref> grants(const grant_ref& after, std::size_t limit) const override {
    auto from = after.tenant.empty() ? std::string{} : kv::tenant_key(after.tenant, after.resource_id + '\0' + after.principal);
    std::vector<grant_ref> out;
    for (const auto& [key, value] : r_.scan(tables::grants, "", from, limit)) {
      auto p = parts(key);
      if (p.size() == 3) out.push_back({p[0], p[1], p[2]});
    }
    return out;
  }

  std::vector<domain::ledger_key> ledger(const domain::ledger_key& after, std::size_t limit) const override {
    auto from = after.tenant.empty() ? std::string{} : kv_ledger::stored_key(after);
    std::vector<domain::ledger_key> out;
    for (const auto& [key, value] : r_.scan(tables::ledger, "", from, limit))
      if (auto entry = kv_ledger::read_entry(key, value)) out.push_back(std::move(entry->key));
    return out;
  }

  std::vector<upload_record> uploads(const resource_position& after, std::size_t limit) const override {
    std::vector<upload_record> out;
    for (const auto& [key, value] : r_.scan(tables::blob_uploads, "", position_key(after), limit))
      out.push_back(decode_upload(value));
    return out;
  }

  std::vector<blob_version> blob_versions(const blob_version& after, std::size_t limit) const override {
    // Keys are tenant\0blob\0<8-byte ~version> (newest first within a blob).
    auto from = after.tenant.empty() ? std::string{}
                                     : kv::tenant_key(after.tenant, after.blob_id + '\0'
                                                                      + kv::big_endian_key(~static_cast<std::uint64_t>(after.version)));
    std::vector<blob_version> out;
    for (const auto& [key, value] : r_.scan(tables::blob_versions, "", from, limit)) out.push_back(decode_blob_version(value));
    return out;
  }

  std::vector<webhook_record> webhooks(const resource_position& after, std::size_t limit) const override {
    std::vector<webhook_record> out;
    for (const auto& [key, value] : r_.scan(tables::webhooks, "", position_key(after), limit))
      out.push_back(decode_webhook(value));
    return out;
  }

  void import_change(const change_entry& e) override {
    w_->put(kv::changes_table(), kv::big_endian_key(e.seq), encode_change(e));
    if (next_seq_ && *next_seq_ <= e.seq) *next_seq_ = e.seq + 1;
  }

private:
  std::vector<resource_position> positions(kv::table t, const resource_position& after, std::size_t limit) const {
    std::vector<resource_position> out;
    for (const auto& [key, value] : r_.scan(t, "", position_key(after), limit)) {
      auto cut = key.find('\0');
      if (cut != std::string::npos) out.push_back({key.substr(0, cut), key.substr(cut + 1)});
    }
    return out;
  }

  const kv::reader& r_;
  kv::writer* w_;
  std::uint64_t* next_seq_;
};

}  // namespace

const bool every_record_implemented = kv::implement<every_record_writes, kv_every_record>();

}  // namespace cl::storage
