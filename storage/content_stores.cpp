#include "storage/content_stores.hpp"

#include "domain/json_text.hpp"
#include "storage/record_store.hpp"

#include <deque>

namespace cl::storage {

namespace {

/// A stored record's own members: what precedes its (client-supplied) content.
std::string_view record_head(std::string_view record) {
  return record.substr(0, record.find(",\"content\":"));
}

/// The string value of top-level member `name` in `head`, or empty.
std::string member(std::string_view head, std::string_view name) {
  auto needle = "\"" + std::string{name} + "\":\"";
  auto at = head.find(needle);
  if (at == std::string_view::npos) return {};
  auto start = at + needle.size();
  return std::string{head.substr(start, head.find('"', start) - start)};
}

/// True when `value` is empty or `head` has the member `"name":"value"`.
bool has_member(std::string_view head, std::string_view name, const std::string& value) {
  return value.empty() || head.find("\"" + std::string{name} + "\":" + domain::json_string(value)) != std::string_view::npos;
}

/// The Resource an Activity record is about, or empty (a Work, a contract).
std::string_view activity_resource(std::string_view record) {
  static constexpr std::string_view marker = "\"target\":{\"kind\":\"resource\",\"id\":\"";
  auto at = record.find(marker);
  if (at == std::string_view::npos) return {};
  auto start = at + marker.size();
  return record.substr(start, record.find('"', start) - start);
}

/// The ids under one key prefix of a table, in order, after a given id, read in chunks.
class id_stream {
public:
  id_stream(const read_view& r, table t, std::string prefix, const std::string& after)
    : r_(r), t_(t), prefix_(std::move(prefix)), after_(after.empty() ? std::string{} : prefix_ + after) {
    fill();
  }
  bool done() const { return buffer_.empty(); }
  const std::string& current() const { return buffer_.front().first; }
  const std::string& value() const { return buffer_.front().second; }
  void advance() {
    buffer_.pop_front();
    if (buffer_.empty() && !exhausted_) fill();
  }

private:
  void fill() {
    auto chunk = r_.scan(t_, prefix_, after_, chunk_size);
    exhausted_ = chunk.size() < chunk_size;
    if (!chunk.empty()) after_ = chunk.back().first;
    for (auto& [key, value] : chunk) buffer_.emplace_back(key.substr(prefix_.size()), std::move(value));
  }
  static constexpr std::size_t chunk_size = 128;
  const read_view& r_;
  table t_;
  std::string prefix_;
  std::string after_;
  std::deque<std::pair<std::string, std::string>> buffer_;
  bool exhausted_ = false;
};

/// Walks `ids` keeping what `keep(id, value)` returns a record for, within the query's bounds.
template <class Keep>
record_page walk(id_stream& ids, std::size_t limit, std::size_t budget, const Keep& keep) {
  record_page page;
  std::size_t examined = 0;
  for (; !ids.done() && page.entries.size() < limit && examined < budget; ids.advance()) {
    ++examined;
    page.resume_after = ids.current();
    if (auto record = keep(ids.current(), ids.value())) page.entries.emplace_back(ids.current(), std::move(*record));
  }
  page.exhausted = ids.done();
  return page;
}

class kv_resource_store final : public resource_writes {
public:
  kv_resource_store(const read_view& reads, write_txn* writes) : r_(reads), w_(writes) {}

  std::optional<std::string> get(std::string_view tenant, std::string_view id) const override {
    return r_.get(table::resources, tenant_key(tenant, id));
  }

  std::optional<std::string> version(std::string_view tenant, std::string_view id, std::string_view version) const override {
    return r_.get(table::versions, version_key(tenant, id, version));
  }

  record_page versions(const version_query& q) const override {
    id_stream ids{r_, table::versions, version_key(q.tenant, q.resource_id, ""), q.after};
    return walk(ids, q.limit, q.limit, [](const std::string&, const std::string& value) { return std::optional{value}; });
  }

  record_page list(const resource_query& q) const override {
    auto keep = [&](std::string_view record) {
      auto head = record_head(record);
      bool staged = head.find("\"work_id\":") == std::string_view::npos;
      return has_member(head, "work_id", q.work_id) && has_member(head, "type", q.type)
             && has_member(head, "language", q.language) && (!q.staged || *q.staged == staged);
    };
    if (q.readable_by.empty()) {
      id_stream ids{r_, table::resources, tenant_key(q.tenant, ""), q.after};
      return walk(ids, q.limit, q.budget, [&](const std::string&, const std::string& value) {
        return keep(value) ? std::optional{value} : std::nullopt;
      });
    }
    // The by-principal grant index gives each principal's Resource ids in order: merging those
    // walks exactly the readable ids after `after`, one point read per candidate.
    std::vector<id_stream> streams;
    streams.reserve(q.readable_by.size());
    for (const auto& p : q.readable_by)
      streams.emplace_back(r_, table::grants_by_principal, tenant_key(q.tenant, p + '\0'), q.after);
    record_page page;
    std::size_t examined = 0;
    for (;;) {
      const std::string* next = nullptr;
      for (const auto& s : streams)
        if (!s.done() && (!next || s.current() < *next)) next = &s.current();
      if (!next) {
        page.exhausted = true;
        break;
      }
      if (page.entries.size() >= q.limit || examined >= q.budget) break;
      std::string id = *next;
      for (auto& s : streams)
        if (!s.done() && s.current() == id) s.advance();
      ++examined;
      page.resume_after = id;
      if (auto record = get(q.tenant, id); record && keep(*record)) page.entries.emplace_back(id, std::move(*record));
    }
    return page;
  }

  void put(std::string_view tenant, std::string_view id, std::string_view record) override {
    w_->put(table::resources, tenant_key(tenant, id), record);
  }

  void put_version(std::string_view tenant, std::string_view id, std::string_view version,
                   std::string_view record) override {
    w_->put(table::versions, version_key(tenant, id, version), record);
  }

private:
  /// Key layout: `resources` tenant\0id; `versions` tenant\0id\0version.
  static std::string version_key(std::string_view tenant, std::string_view id, std::string_view version) {
    return tenant_key(tenant, std::string{id} + '\0' + std::string{version});
  }

  const read_view& r_;
  write_txn* w_;
};

class kv_activity_store final : public activity_writes {
public:
  kv_activity_store(const read_view& reads, write_txn* writes) : r_(reads), w_(writes) {}

  std::optional<std::string> get(std::string_view tenant, std::string_view id) const override {
    return r_.get(table::activities, tenant_key(tenant, id));
  }

  record_page list(const activity_query& q) const override {
    auto type_text = q.type.empty() ? std::string{} : "\"type\":" + domain::json_string(q.type) + ",";
    auto readable = [&](std::string_view record) {
      auto about = activity_resource(record);
      if (about.empty() || q.readable_by.empty()) return true;
      // One point read per principal in the by-principal grant index: any grant lets it read.
      for (const auto& p : q.readable_by)
        if (r_.grants().role(q.tenant, p, about)) return true;
      return false;
    };
    auto keep = [&](const std::string& id, const std::optional<std::string>& record) -> std::optional<std::string> {
      if (!record) return std::nullopt;
      if (!type_text.empty() && record->find(type_text) == std::string::npos) return std::nullopt;
      if (!readable(*record)) return std::nullopt;
      return record;
    };
    if (!q.resource_id.empty()) {  // the by-Resource index: only that Resource's Activities
      id_stream ids{r_, table::activities_by_resource, tenant_key(q.tenant, q.resource_id + '\0'), q.after};
      return walk(ids, q.limit, q.budget, [&](const std::string& id, const std::string&) { return keep(id, get(q.tenant, id)); });
    }
    id_stream ids{r_, table::activities, tenant_key(q.tenant, ""), q.after};
    return walk(ids, q.limit, q.budget,
                [&](const std::string& id, const std::string& value) { return keep(id, std::optional{value}); });
  }

  void put(std::string_view tenant, std::string_view id, std::string_view about_resource,
           std::string_view record) override {
    w_->put(table::activities, tenant_key(tenant, id), record);
    if (!about_resource.empty())
      w_->put(table::activities_by_resource, tenant_key(tenant, std::string{about_resource} + '\0' + std::string{id}), "");
  }

private:
  const read_view& r_;
  write_txn* w_;
};

table table_of(catalog_kind kind) {
  switch (kind) {
    case catalog_kind::work: return table::works;
    case catalog_kind::source: return table::sources;
    case catalog_kind::agent: return table::agents;
  }
  return table::works;
}

class kv_catalog_store final : public catalog_writes {
public:
  kv_catalog_store(const read_view& reads, write_txn* writes) : r_(reads), w_(writes) {}

  std::optional<std::string> get(catalog_kind kind, std::string_view tenant, std::string_view id) const override {
    return r_.get(table_of(kind), tenant_key(tenant, id));
  }

  record_page list(const catalog_query& q) const override {
    id_stream ids{r_, table_of(q.kind), tenant_key(q.tenant, ""), q.after};
    return walk(ids, q.limit, q.limit, [](const std::string&, const std::string& value) { return std::optional{value}; });
  }

  void put(catalog_kind kind, std::string_view tenant, std::string_view id, std::string_view record) override {
    w_->put(table_of(kind), tenant_key(tenant, id), record);
  }

private:
  const read_view& r_;
  write_txn* w_;
};

}  // namespace

resource_fields fields_of(std::string_view resource_record) {
  auto head = record_head(resource_record);
  return resource_fields{member(head, "work_id"), member(head, "version")};
}

std::string activity_about(std::string_view activity_record) {
  return std::string{activity_resource(activity_record)};
}

std::unique_ptr<resource_writes> make_kv_resource_store(const read_view& reads, write_txn* writes) {
  return std::make_unique<kv_resource_store>(reads, writes);
}

std::unique_ptr<activity_writes> make_kv_activity_store(const read_view& reads, write_txn* writes) {
  return std::make_unique<kv_activity_store>(reads, writes);
}

std::unique_ptr<catalog_writes> make_kv_catalog_store(const read_view& reads, write_txn* writes) {
  return std::make_unique<kv_catalog_store>(reads, writes);
}

}  // namespace cl::storage
