#include "storage/copyable.hpp"

#include "storage/record_store.hpp"

#include <algorithm>

namespace cl::storage {

namespace copy_position {

namespace {
constexpr char sep = '\x1f';  ///< between the parts of a position (no id holds it)
}

std::string join(std::initializer_list<std::string> parts) {
  std::string out;
  bool first = true;
  for (const auto& p : parts) {
    if (!first) out.push_back(sep);
    out += p;
    first = false;
  }
  return out;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    auto cut = s.find(sep, start);
    out.push_back(s.substr(start, cut == std::string::npos ? std::string::npos : cut - start));
    if (cut == std::string::npos) return out;
    start = cut + 1;
  }
}

std::string part(const std::string& position, std::size_t i) {
  auto parts = split(position);
  return i < parts.size() ? parts[i] : std::string{};
}

}  // namespace copy_position

std::vector<record_kind> record_kinds_of(const read_view& view) {
  std::vector<record_kind> all;
  for (std::size_t slot = 0; slot < store_kinds_count(); ++slot)
    if (const auto* copyable = dynamic_cast<const copyable_store*>(view.store_at(slot)))
      for (auto& k : copyable->record_kinds()) all.push_back(std::move(k));
  std::stable_sort(all.begin(), all.end(), [](const record_kind& a, const record_kind& b) { return a.stage < b.stage; });
  return all;
}

}  // namespace cl::storage
