#include "actors/representation_cache.hpp"

namespace cl::actors {

representation_cache::representation_cache(std::size_t budget) : slots_(budget) {}

std::string representation_cache::key(std::string_view tenant, std::string_view id, std::string_view rendering) {
  std::string k;
  k.reserve(tenant.size() + id.size() + rendering.size() + 2);
  k.append(tenant).push_back('\0');
  k.append(id).push_back('\0');
  k.append(rendering);
  return k;
}

std::size_t representation_cache::cost::operator()(std::string_view key, const slot& s) const {
  // The strings, the rendering and its headers, and about 160 bytes of list node, index entry and
  // control blocks (and 64 a header's pair of strings).
  std::size_t headers = 0;
  for (const auto& [name, value] : s.made->headers) headers += name.size() + value.size() + 64;
  return key.size() * 2 + s.record.size() + s.rights_digest.size() + s.rights_json.size() + s.made->hash.size()
         + s.made->body.size() + headers + 160;
}

std::shared_ptr<const representation_cache::rendering> representation_cache::find(const std::string& key,
                                                                                   const inputs& from) const {
  if (slots_.budget_per_shard() == 0) return nullptr;
  std::shared_ptr<const rendering> out;
  slots_.read(key, [&](const slot& e) {
    if (e.record != from.record || e.rights_digest != from.rights_digest || e.rights_json != from.rights_json)
      return false;
    out = e.made;
    return true;
  });
  return out;
}

void representation_cache::insert(const std::string& key, const inputs& from, std::shared_ptr<const rendering> made) {
  if (slots_.budget_per_shard() == 0 || !made) return;
  slots_.insert(key, slot{std::string{from.record}, std::string{from.rights_digest}, std::string{from.rights_json}, std::move(made)});
}

std::size_t representation_cache::bytes() const {
  return slots_.bytes();
}

std::size_t representation_cache::size() const {
  return slots_.size();
}

}  // namespace cl::actors
