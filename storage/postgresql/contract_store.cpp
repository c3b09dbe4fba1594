// Contracts in SQL: every version in `contract_versions`, the latest in `contracts` (status and
// Works as columns), the Work index `contract_works`, and the usage pairs ever named in
// `contract_usages`.

#include "storage/contract_store.hpp"

#include "domain/contract.hpp"
#include "storage/postgresql/backend.hpp"
#include "storage/walk.hpp"

#include <algorithm>

namespace cl::storage::pg {

namespace {

const statement get_latest{"SELECT record FROM contracts WHERE tenant = $1 AND id = $2"};
// In a write: the contract stays this transaction's to its commit, so an update checked against the
// version it read (update_token) never writes over another node's or lane's newer one.
const statement get_latest_locked{"SELECT record FROM contracts WHERE tenant = $1 AND id = $2 FOR UPDATE"};
const statement get_works{"SELECT works FROM contracts WHERE tenant = $1 AND id = $2"};
const statement get_version{"SELECT record FROM contract_versions WHERE tenant = $1 AND id = $2 AND version = $3"};
const statement latest_for_work{
  "SELECT c.record FROM contract_works w CROSS JOIN LATERAL "
  "(SELECT record FROM contracts x WHERE x.tenant = w.tenant AND x.id = w.contract_id OFFSET 0) c "
  "WHERE w.tenant = $1 AND w.work_id = $2 ORDER BY w.contract_id LIMIT 1000"};
const statement page_all{
  "SELECT id, status, record FROM contracts WHERE tenant = $1 AND id > $2 ORDER BY id LIMIT $3"};
const statement page_by_work{
  "SELECT w.contract_id, c.status, c.record FROM contract_works w CROSS JOIN LATERAL "
  "(SELECT status, record FROM contracts x WHERE x.tenant = w.tenant AND x.id = w.contract_id OFFSET 0) c "
  "WHERE w.tenant = $1 AND w.work_id = $2 AND w.contract_id > $3 ORDER BY w.contract_id LIMIT $4"};
const statement page_versions{
  "SELECT version, record FROM contract_versions WHERE tenant = $1 AND id = $2 AND version > $3 "
  "ORDER BY version LIMIT $4"};
const statement usages{
  "SELECT usage_type, status FROM contract_usages WHERE tenant = $1 ORDER BY usage_type, status LIMIT 10000"};
const statement add_usages{
  "INSERT INTO contract_usages (tenant, usage_type, status) SELECT $1, u, s FROM unnest($2::text[], $3::text[]) AS x(u, s) "
  "ON CONFLICT DO NOTHING"};
const statement works_remove{"DELETE FROM contract_works WHERE tenant = $1 AND contract_id = $2 AND work_id = ANY($3::text[])"};
const statement works_add{
  "INSERT INTO contract_works (tenant, work_id, contract_id) SELECT $1, w, $2 FROM unnest($3::text[]) AS x(w) "
  "ON CONFLICT DO NOTHING"};
const statement upsert_latest{
  "INSERT INTO contracts (tenant, id, version, status, works, record) VALUES ($1, $2, $3, $4, $5, $6) "
  "ON CONFLICT (tenant, id) DO UPDATE SET version = EXCLUDED.version, status = EXCLUDED.status, "
  "works = EXCLUDED.works, record = EXCLUDED.record"};
const statement upsert_version{
  "INSERT INTO contract_versions (tenant, id, version, status, works, record) VALUES ($1, $2, $3, $4, $5, $6) "
  "ON CONFLICT (tenant, id, version) DO UPDATE SET status = EXCLUDED.status, works = EXCLUDED.works, "
  "record = EXCLUDED.record"};

using item = std::pair<std::string, std::string>;  ///< status, record
using stream = walks::id_stream<item>;

class pg_contract_store final : public contract_writes {
public:
  explicit pg_contract_store(const context& c) : db_(c.reads()), writable_(c.writable) {}

  std::optional<std::string> latest(std::string_view tenant, std::string_view id) const override {
    return first(db_.run(writable_ ? get_latest_locked : get_latest, {tenant, id}));
  }

  std::optional<std::string> version(std::string_view tenant, std::string_view id, std::int64_t version) const override {
    return first(db_.run(get_version, {tenant, id, num(version)}));
  }

  std::vector<std::string> for_work(std::string_view tenant, std::string_view work_id) const override {
    auto r = db_.run(latest_for_work, {tenant, work_id});
    std::vector<std::string> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back(r.str(i, 0));
    return out;
  }

  record_page list(const contract_query& q) const override {
    auto fetch = [&](const std::string& after, std::size_t n) {
      auto r = q.work_id.empty() ? db_.run(page_all, {q.tenant, after, num(static_cast<std::uint64_t>(n))})
                                 : db_.run(page_by_work, {q.tenant, q.work_id, after, num(static_cast<std::uint64_t>(n))});
      stream::chunk out;
      for (std::size_t i = 0; i < r.size(); ++i) out.emplace_back(r.str(i, 0), item{r.str(i, 1), r.str(i, 2)});
      return out;
    };
    stream ids{fetch, q.after, std::min<std::size_t>(std::max<std::size_t>(q.limit, 16), 256)};
    return walks::walk(ids, q.limit, q.budget, [&](const std::string&, const item& c) -> std::optional<std::string> {
      if (!q.status.empty() && c.first != q.status) return std::nullopt;
      return c.second;
    });
  }

  record_page versions(const contract_versions_query& q) const override {
    record_page page;
    bool decimal = !q.after.empty() && q.after.size() <= 18
                   && std::all_of(q.after.begin(), q.after.end(), [](char c) { return c >= '0' && c <= '9'; });
    auto r = db_.run(page_versions, {q.tenant, q.id, decimal ? q.after : std::string{"0"},
                                     num(static_cast<std::uint64_t>(q.limit))});
    for (std::size_t i = 0; i < r.size(); ++i) {
      page.resume_after = r.str(i, 0);
      page.entries.emplace_back(page.resume_after, r.str(i, 1));
    }
    page.exhausted = r.size() < q.limit;
    return page;
  }

  std::vector<std::pair<std::string, std::string>> usages_named(std::string_view tenant) const override {
    auto r = db_.run(usages, {tenant});
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.emplace_back(r.str(i, 0), r.str(i, 1));
    return out;
  }

  void put_version(std::string_view tenant, std::string_view id, std::int64_t version, std::string_view status,
                   const std::vector<std::string>& works, std::string_view record) override {
    if (auto view = domain::contract_view_of(record); view && !view->usage_terms.empty()) {
      std::vector<std::string> types, statuses;
      for (const auto& u : view->usage_terms) {
        types.push_back(u.type);
        statuses.push_back(u.status);
      }
      db_.run(add_usages, {tenant, array_literal(types), array_literal(statuses)});
    }
    // The index follows the latest version: Works it no longer lists leave, new ones join.
    std::vector<std::string> gone;
    if (auto before = db_.run(get_works, {tenant, id}); !before.empty())
      for (auto& w : parse_array(before.text(0, 0)))
        if (std::find(works.begin(), works.end(), w) == works.end()) gone.push_back(std::move(w));
    if (!gone.empty()) db_.run(works_remove, {tenant, id, array_literal(gone)});
    auto list = array_literal(works);
    if (!works.empty()) db_.run(works_add, {tenant, id, list});
    auto v = num(version);
    db_.run(upsert_latest, {tenant, id, v, status, list, record});
    db_.run(upsert_version, {tenant, id, v, status, list, record});
  }

private:
  static std::optional<std::string> first(const rows& r) {
    if (r.empty()) return std::nullopt;
    return r.str(0, 0);
  }

  const session& db_;
  bool writable_;
};

}  // namespace

const bool contracts_implemented = implement<contract_writes, pg_contract_store>();

}  // namespace cl::storage::pg
