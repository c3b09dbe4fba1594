#include "storage/search/feed.hpp"

#include "domain/content_format.hpp"
#include "storage/stores.hpp"

#include <boost/json.hpp>

#include <set>
#include <stdexcept>

namespace cl::storage {

namespace json = boost::json;

namespace {

std::size_t text_bytes(const indexed_resource& r) { return r.title.size() + r.text.size(); }

}  // namespace

std::optional<indexed_resource> index_entry(const read_view& view, const std::string& tenant, const std::string& id) {
  auto record = view.resources().get(tenant, id);
  auto header = view.resources().header(tenant, id);
  if (!record || !header) return std::nullopt;
  indexed_resource r;
  r.tenant = tenant;
  r.id = id;
  r.type = header->type;
  r.language = header->language;
  r.work_id = header->work_id;
  auto doc = json::parse(*record);
  if (const auto* o = doc.if_object()) {
    if (const auto* title = o->if_contains("title"); title && title->is_string()) r.title = std::string{title->as_string()};
    if (const auto* content = o->if_contains("content")) r.text = domain::search_text(*content);
  }
  grant_query q;
  q.tenant = tenant;
  q.resource_id = id;
  q.limit = 1000;
  for (;;) {
    auto page = view.grants().on_resource(q);
    for (const auto& [principal, grant] : page.entries) r.readers.push_back(principal);
    if (page.entries.size() < q.limit) break;
    q.after = page.entries.back().first;
  }
  return r;
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
    const auto& at = found[taken++];
    if (auto entry = index_entry(store, at.tenant, at.id)) {
      bytes += text_bytes(*entry);
      docs.push_back(std::move(*entry));
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

catch_up_result catch_up(search_index& index, const record_store& store, std::size_t max_changes,
                         std::size_t max_text_bytes) {
  catch_up_result result;
  result.applied = index.applied();
  auto changes = store.read_from(result.applied, max_changes);
  if (changes.empty()) return result;
  std::set<std::pair<std::string, std::string>> touched;  // (tenant, id), once per batch
  std::vector<indexed_resource> upserts;
  std::vector<std::pair<std::string, std::string>> removed;
  std::size_t taken = 0;
  std::size_t bytes = 0;
  while (taken < changes.size() && bytes < max_text_bytes) {
    const auto& c = changes[taken++];
    if (c.kind != change_kind::resource || !touched.emplace(c.tenant, c.id).second) continue;
    if (auto entry = index_entry(store, c.tenant, c.id)) {
      bytes += text_bytes(*entry);
      upserts.push_back(std::move(*entry));
    } else {
      removed.emplace_back(c.tenant, c.id);
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
