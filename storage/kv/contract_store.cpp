#include "storage/contract_store.hpp"

#include "domain/contract.hpp"
#include "storage/encoding.hpp"
#include "storage/kv/codecs.hpp"
#include "storage/kv/kv.hpp"
#include "storage/stores.hpp"

#include <algorithm>

namespace cl::storage {

using kv::big_endian_key;
using kv::tenant_key;

/// The tables this file owns or reads (declared by name: another file naming one shares it).
namespace tables {
const kv::table contract_versions = kv::declare_table("contract_versions");
const kv::table contract_works = kv::declare_table("contract_works");
const kv::table contracts = kv::declare_table("contracts");
}  // namespace tables

using namespace encoding;

namespace {

constexpr char header_v2 = '\x02';

std::string version_suffix(std::int64_t version) {
  return big_endian_key(static_cast<std::uint64_t>(version));
}

/// The `contract_works` prefix of a tenant's usage pairs: an empty Work id, which no Work has.
std::string usages_prefix(std::string_view tenant) { return tenant_key(tenant, std::string(1, '\0')); }

}  // namespace

std::vector<std::string> usage_named_keys(std::string_view tenant, std::string_view record) {
  std::vector<std::string> keys;
  auto view = domain::contract_view_of(record);
  if (!view) return keys;
  for (const auto& u : view->usage_terms) keys.push_back(usages_prefix(tenant) + u.type + '\0' + u.status);
  return keys;
}

std::string encode_contract(std::string_view status, const std::vector<std::string>& works, std::string_view record) {
  std::string out(1, header_v2);
  put_text(out, status);
  out.push_back(static_cast<char>((works.size() >> 8) & 0xff));
  out.push_back(static_cast<char>(works.size() & 0xff));
  for (const auto& w : works) put_text(out, w);
  out.append(record);
  return out;
}

std::optional<stored_contract> decode_contract(std::string_view bytes) {
  stored_contract c;
  if (!bytes.empty() && bytes.front() == '{') {  // format 1: the bare record
    auto view = domain::contract_view_of(bytes);
    if (!view) return std::nullopt;
    c.status = view->status;
    c.works = view->work_ids;
    c.record = std::string{bytes};
    return c;
  }
  if (bytes.size() < 5 || bytes.front() != header_v2) return std::nullopt;
  bytes.remove_prefix(1);
  if (!get_text(bytes, c.status) || bytes.size() < 2) return std::nullopt;
  std::size_t n = (static_cast<unsigned char>(bytes[0]) << 8) | static_cast<unsigned char>(bytes[1]);
  bytes.remove_prefix(2);
  for (std::size_t i = 0; i < n; ++i) {
    std::string w;
    if (!get_text(bytes, w)) return std::nullopt;
    c.works.push_back(std::move(w));
  }
  c.record = std::string{bytes};
  return c;
}

/// The contract store over any read view's tables (LMDB now): the key layout is
/// `contracts` tenant\0id, `contract_versions` tenant\0id\0<8-byte version>,
/// `contract_works` tenant\0work\0id, and tenant\0\0usage_type\0status for `usages_named`.
class kv_contract_store final : public contract_writes {
public:
  explicit kv_contract_store(const kv::context& c) : r_(c.r), w_(c.w) {}

  std::optional<std::string> latest(std::string_view tenant, std::string_view id) const override {
    require_storable({tenant, id});
    return record_of(r_.get(tables::contracts, tenant_key(tenant, id)));
  }

  std::optional<std::string> version(std::string_view tenant, std::string_view id, std::int64_t version) const override {
    require_storable({tenant, id});
    return record_of(r_.get(tables::contract_versions, tenant_key(tenant, std::string{id} + '\0' + version_suffix(version))));
  }

  std::vector<std::string> for_work(std::string_view tenant, std::string_view work_id) const override {
    require_storable({tenant, work_id});
    std::vector<std::string> out;
    auto prefix = tenant_key(tenant, std::string{work_id} + '\0');
    for (const auto& [key, value] : r_.scan(tables::contract_works, prefix, {}, 1000))
      if (auto record = latest(tenant, std::string_view{key}.substr(prefix.size()))) out.push_back(std::move(*record));
    return out;
  }

  record_page list(const contract_query& q) const override {
    record_page page;
    std::size_t examined = 0;
    auto keep = [&](const std::string& id, const std::optional<std::string>& bytes) {
      ++examined;
      page.resume_after = id;
      auto c = bytes ? decode_contract(*bytes) : std::nullopt;
      if (c && (q.status.empty() || c->status == q.status)) page.entries.emplace_back(id, std::move(c->record));
    };
    // Through the Work index when filtering by Work: only the contracts that list it are walked.
    bool by_work = !q.work_id.empty();
    auto prefix = by_work ? tenant_key(q.tenant, q.work_id + '\0') : tenant_key(q.tenant, "");
    auto after = prefix + q.after;  // after the empty id even from the start, as on PostgreSQL
    for (;;) {
      auto chunk = r_.scan(by_work ? tables::contract_works : tables::contracts, prefix, after, 256);
      for (const auto& [key, value] : chunk) {
        if (page.entries.size() >= q.limit || examined >= q.budget) return page;
        auto id = key.substr(prefix.size());
        keep(id, by_work ? r_.get(tables::contracts, tenant_key(q.tenant, id)) : std::optional<std::string>{value});
      }
      if (chunk.size() < 256) {
        page.exhausted = true;
        return page;
      }
      after = chunk.back().first;
    }
  }

  record_page versions(const contract_versions_query& q) const override {
    require_storable({q.tenant, q.id});
    record_page page;
    auto prefix = tenant_key(q.tenant, q.id + '\0');
    std::string after;
    bool decimal = !q.after.empty() && q.after.size() <= 18
                   && std::all_of(q.after.begin(), q.after.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (decimal) after = prefix + version_suffix(std::stoll(q.after));
    else if (q.after.size() >= 8) after = prefix + q.after.substr(q.after.size() - 8);  // a format-1 token: the key's version
    auto entries = r_.scan(tables::contract_versions, prefix, after, q.limit);
    for (const auto& [key, value] : entries) {
      std::uint64_t n = 0;
      for (char c : std::string_view{key}.substr(prefix.size())) n = (n << 8) | static_cast<unsigned char>(c);
      if (auto c = decode_contract(value)) page.entries.emplace_back(std::to_string(n), std::move(c->record));
      page.resume_after = std::to_string(n);
    }
    page.exhausted = entries.size() < q.limit;
    return page;
  }

  std::vector<std::pair<std::string, std::string>> usages_named(std::string_view tenant) const override {
    std::vector<std::pair<std::string, std::string>> out;
    auto prefix = usages_prefix(tenant);
    for (const auto& [key, value] : r_.scan(tables::contract_works, prefix, {}, 10000)) {
      auto pair = std::string_view{key}.substr(prefix.size());
      auto cut = pair.find('\0');
      if (cut != std::string_view::npos) out.emplace_back(pair.substr(0, cut), pair.substr(cut + 1));
    }
    return out;
  }

  void put_version(std::string_view tenant, std::string_view id, std::int64_t version, std::string_view status,
                   const std::vector<std::string>& works, std::string_view record) override {
    require_storable({tenant, id, status, record});
    for (const auto& key : usage_named_keys(tenant, record)) w_->put(tables::contract_works, key, "");
    // The index follows the latest version: Works it no longer lists leave, new ones join.
    std::vector<std::string> before;
    if (auto bytes = r_.get(tables::contracts, tenant_key(tenant, id)))
      if (auto c = decode_contract(*bytes)) before = c->works;
    for (const auto& w : before)
      if (std::find(works.begin(), works.end(), w) == works.end())
        w_->erase(tables::contract_works, tenant_key(tenant, w + '\0' + std::string{id}));
    for (const auto& w : works) w_->put(tables::contract_works, tenant_key(tenant, w + '\0' + std::string{id}), "");
    auto bytes = encode_contract(status, works, record);
    w_->put(tables::contracts, tenant_key(tenant, id), bytes);
    w_->put(tables::contract_versions, tenant_key(tenant, std::string{id} + '\0' + version_suffix(version)), bytes);
  }

private:
  static std::optional<std::string> record_of(const std::optional<std::string>& bytes) {
    if (!bytes) return std::nullopt;
    auto c = decode_contract(*bytes);
    if (!c) return std::nullopt;
    return std::move(c->record);
  }

  const kv::reader& r_;
  kv::writer* w_;
};

const bool implemented = kv::implement<contract_writes, kv_contract_store>();

}  // namespace cl::storage
