#include "storage/postgresql/hot_records.hpp"

namespace cl::storage::pg {

hot_records::hot_records(std::size_t budget, std::size_t shards) : slots_(budget, shards) {}

std::string hot_records::key(std::string_view tenant, std::string_view id) {
  std::string k{tenant};
  k.push_back('\0');
  return k.append(id);
}

std::size_t hot_records::cost::operator()(std::string_view key, const slot& s) const {
  std::size_t n = 2 * key.size() + 160;  // list node, map slot, strings
  if (!s.value) return n;
  const auto& e = *s.value;
  n += e.record.size() + e.header.work_id.size() + e.header.type.size() + e.header.language.size()
       + e.header.version.size();
  for (const auto& b : e.header.blobs) n += b.size() + 32;
  return n;
}

std::uint64_t hot_records::reserve(const std::string& key) {
  std::uint64_t token = 0;
  slots_.update(key, [&](const slot* existing) -> std::optional<slot> {
    if (existing) {
      token = existing->token;  // reserved or filled since
      return std::nullopt;
    }
    token = ++tokens_;
    return slot{std::nullopt, token};
  });
  return token;
}

std::optional<hot_records::entry> hot_records::find(std::string_view key) const {
  if (current_ && !current_()) return std::nullopt;  // lagging the log: read the database
  std::optional<entry> out;
  slots_.read(key, [&out](const slot& s) {
    if (!s.value) return false;
    out = *s.value;
    return true;  // read lately: last out
  });
  return out;
}

void hot_records::put(const std::string& key, entry e, std::uint64_t token) {
  slots_.update(key, [&](const slot* existing) -> std::optional<slot> {
    // Dropped since the read began (the reservation is gone or is a newer one), or filled by
    // another read begun after the same reservation: nothing to keep.
    if (!existing || existing->token != token || existing->value) return std::nullopt;
    return slot{std::move(e), token};
  });
}

void hot_records::drop(std::string_view key) {
  slots_.erase(key);
}

void hot_records::clear() {
  slots_.clear();
}

std::size_t hot_records::bytes() const {
  return slots_.bytes();
}

std::size_t hot_records::size() const {
  return slots_.count_if([](const slot& s) { return s.value.has_value(); });
}

}  // namespace cl::storage::pg
