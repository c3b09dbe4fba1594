#include "storage/search/feed.hpp"

#include "domain/content_format.hpp"
#include "storage/stores.hpp"

#include <boost/json.hpp>

#include <map>
#include <set>
#include <stdexcept>

namespace cl::storage {

namespace json = boost::json;

namespace {

std::size_t text_bytes(const indexed_resource& r) { return r.title.size() + r.text.size(); }

/// Resources read together by the indexer (records in one read, grants in another).
constexpr std::size_t read_chunk = 100;

}  // namespace

std::vector<std::optional<indexed_resource>> index_entries(const read_view& view, const std::vector<resource_key>& keys) {
  std::map<std::string, std::vector<std::string>> by_tenant;
  for (const auto& [tenant, id] : keys) by_tenant[tenant].push_back(id);
  std::map<resource_key, indexed_resource> found;
  for (const auto& [tenant, ids] : by_tenant) {
    auto records = view.resources().records_of(tenant, ids);
    if (records.empty()) continue;
    std::vector<std::string> present;
    for (const auto& [id, record] : records) present.push_back(id);
    auto readers = view.grants().principals_on(tenant, present);
    for (auto& [id, stored] : records) {
      auto& [record, header] = stored;
      indexed_resource r;
      r.tenant = tenant;
      r.id = id;
      r.type = header.type;
      r.language = header.language;
      r.work_id = header.work_id;
      auto doc = json::parse(record);
      if (const auto* o = doc.if_object()) {
        if (const auto* title = o->if_contains("title"); title && title->is_string()) r.title = std::string{title->as_string()};
        if (const auto* content = o->if_contains("content")) r.text = domain::search_text(*content);
      }
      if (auto it = readers.find(id); it != readers.end()) r.readers = std::move(it->second);
      found.emplace(resource_key{tenant, id}, std::move(r));
    }
  }
  std::vector<std::optional<indexed_resource>> out;
  out.reserve(keys.size());
  for (const auto& k : keys) {
    auto it = found.find(k);
    if (it == found.end()) {
      out.emplace_back();
    } else {
      out.emplace_back(std::move(it->second));
      found.erase(it);
    }
  }
  return out;
}

rebuild_step_result rebuild_step(search_index& index, const record_store& store, std::size_t page,
                                 std::size_t max_text_bytes) {
  auto progress = index.rebuilding();
  if (!progress) return {0, true};
  auto found = store.resources().every(progress->after, page);
  std::vector<indexed_resource> docs;
  std::size_t taken = 0;
  std::size_t bytes = 0;
  while (taken < found.size() && bytes < max_text_bytes) {
    std::vector<resource_key> keys;
    for (auto i = taken; i < found.size() && keys.size() < read_chunk; ++i) keys.emplace_back(found[i].tenant, found[i].id);
    auto entries = index_entries(store, keys);
    for (auto& entry : entries) {
      ++taken;
      if (entry) {
        bytes += text_bytes(*entry);
        docs.push_back(std::move(*entry));
      }
      if (bytes >= max_text_bytes) break;
    }
  }
  rebuild_step_result result;
  result.documents = docs.size();
  result.done = taken == found.size() && found.size() < page;
  index.apply_rebuild(docs, taken == 0 ? progress->after : found[taken - 1], result.done);
  return result;
}

rebuild_result rebuild_index(const std::filesystem::path& dir, const record_store& store, std::size_t page,
                             std::size_t max_text_bytes) {
  if (search_index::in_use(dir))
    throw std::runtime_error("the search index " + dir.string() + " is in use (is the service running on this data dir?)");
  rebuild_result result;
  result.applied = store.last_change();
  auto fresh = dir;
  fresh += ".rebuild";
  std::filesystem::remove_all(fresh);
  {
    search_index index{fresh};
    index.begin_rebuild(result.applied);
    for (;;) {
      auto step = rebuild_step(index, store, page, max_text_bytes);
      result.documents += step.documents;
      if (step.done) break;
    }
  }
  std::filesystem::remove_all(dir);
  std::filesystem::rename(fresh, dir);
  return result;
}

bool log_continues_after(const record_store& store, std::uint64_t applied) {
  auto next = store.read_from(applied, 1);
  return next.empty() || next.front().seq == applied + 1;
}

catch_up_result catch_up(search_index& index, const record_store& store, std::size_t max_changes,
                         std::size_t max_text_bytes) {
  catch_up_result result;
  result.applied = index.applied();
  auto changes = store.read_from(result.applied, max_changes);
  if (changes.empty()) return result;
  if (changes.front().seq > result.applied + 1)
    throw change_log_gap("the change log was trimmed past the search index (it applied " + std::to_string(result.applied)
                         + ", the oldest entry kept is " + std::to_string(changes.front().seq) + ")");
  std::set<std::pair<std::string, std::string>> touched;  // (tenant, id), once per batch
  std::vector<indexed_resource> upserts;
  std::vector<std::pair<std::string, std::string>> removed;
  std::size_t taken = 0;
  std::size_t bytes = 0;
  while (taken < changes.size() && bytes < max_text_bytes) {
    // The next chunk of Resources the changes name (each once per batch), read together.
    std::vector<resource_key> keys;
    std::vector<std::size_t> at;  // the change that named each
    auto scan = taken;
    for (; scan < changes.size() && keys.size() < read_chunk; ++scan) {
      const auto& c = changes[scan];
      if (c.kind != change_kind::resource || !touched.emplace(c.tenant, c.id).second) continue;
      keys.emplace_back(c.tenant, c.id);
      at.push_back(scan);
    }
    auto entries = index_entries(store, keys);
    taken = scan;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (entries[i]) {
        bytes += text_bytes(*entries[i]);
        upserts.push_back(std::move(*entries[i]));
      } else {
        removed.push_back(keys[i]);
      }
      if (bytes >= max_text_bytes) {
        taken = at[i] + 1;  // the rest waits for the next batch
        break;
      }
    }
  }
  result.changes = taken;
  result.documents = upserts.size() + removed.size();
  result.applied = changes[taken - 1].seq;
  result.more = taken < changes.size() || changes.size() == max_changes;
  index.apply(upserts, removed, result.applied);
  return result;
}

}  // namespace cl::storage
