#include "storage/search/filters.hpp"

namespace cl::storage::search_detail {

namespace {

std::vector<std::string> one(const std::string& value) {
  return value.empty() ? std::vector<std::string>{} : std::vector<std::string>{value};
}

}  // namespace

const std::vector<filter_kind>& filter_table() {
  static const std::vector<filter_kind> table = {
    {"XT", [](const indexed_resource& r) { return one(r.tenant); }, [](const search_query& q) { return one(q.tenant); }, true},
    {"XY", [](const indexed_resource& r) { return one(r.type); }, [](const search_query& q) { return q.types; }, false},
    {"XL", [](const indexed_resource& r) { return one(r.language); }, [](const search_query& q) { return q.languages; }, false},
    {"XW", [](const indexed_resource& r) { return one(r.work_id); }, [](const search_query& q) { return one(q.work_id); }, false},
    {"XS", [](const indexed_resource& r) { return one(r.work_id.empty() ? "1" : "0"); }, nullptr, false},
    {"XR", [](const indexed_resource& r) { return r.readers; }, [](const search_query& q) { return q.principals; }, true},
  };
  return table;
}

void add_filter_terms(Xapian::Document& doc, const indexed_resource& r) {
  for (const auto& f : filter_table())
    for (const auto& v : f.indexed(r)) doc.add_boolean_term(f.prefix + v);
}

std::shared_ptr<filter_source::groups> filter_groups(const search_query& q) {
  auto groups = std::make_shared<filter_source::groups>();
  for (const auto& f : filter_table()) {
    if (!f.asked) continue;
    auto values = f.asked(q);
    if (values.empty() && !f.always) continue;
    std::vector<std::string> terms;
    for (const auto& v : values) terms.push_back(f.prefix + v);
    groups->push_back(std::move(terms));
  }
  return groups;
}

filter_reach reach_of(const Xapian::Database& db, const filter_source::groups& groups) {
  auto documents = db.get_doccount();
  filter_reach reach;
  for (const auto& group : groups) {
    Xapian::doccount held = 0;
    for (const auto& term : group) held += db.get_termfreq(term);
    reach.dense = reach.dense && std::uint64_t{held} * 64 >= documents;
    reach.share *= documents == 0 ? 0.0 : std::min(1.0, static_cast<double>(held) / documents);
  }
  return reach;
}

Xapian::Query filters_of(const std::shared_ptr<filter_sets>& sets,
                         const std::shared_ptr<const filter_source::groups>& groups, const filter_reach& reach) {
  if (reach.dense) {
    filter_source filtered{sets, groups};
    return Xapian::Query(filtered.clone()->release());
  }
  std::vector<Xapian::Query> all;
  for (const auto& group : *groups) {
    std::vector<Xapian::Query> any(group.begin(), group.end());
    all.emplace_back(Xapian::Query::OP_OR, any.begin(), any.end());
  }
  return Xapian::Query(Xapian::Query::OP_AND, all.begin(), all.end());
}

}  // namespace cl::storage::search_detail
