#include "storage/backend.hpp"

#include <stdexcept>

namespace cl::storage {

// Each backend's entry, defined in its own folder.
backend_entry lmdb_backend();        // storage/kv/lmdb_backend.cpp
backend_entry postgresql_backend();  // storage/postgresql/postgresql_backend.cpp
backend_entry memory_backend();      // storage/kv/memory_backend.cpp

const std::vector<backend_entry>& backends() {
  // The registration list: one line per backend; the first is the default.
  static const std::vector<backend_entry> all{lmdb_backend(), postgresql_backend(), memory_backend()};
  return all;
}

namespace {

std::string known_names() {
  std::string out;
  for (const auto& b : backends()) out += (out.empty() ? "" : ", ") + b.name;
  return out;
}

const backend_entry& entry_of(const config::settings& s) {
  for (const auto& b : backends())
    if (b.name == s.storage.backend) return b;
  throw std::runtime_error("storage.backend " + s.storage.backend + " is none of " + known_names());
}

}  // namespace

std::unique_ptr<backend> open_backend(const config::settings& s) {
  const auto& e = entry_of(s);
  return e.make(e, s);
}

std::vector<config::option> backend_options() {
  std::string described;
  for (const auto& b : backends()) described += (described.empty() ? "" : ", ") + b.name + " (" + b.summary + ")";
  std::vector<config::option> out{
    {"storage.backend", backends().front().name, "Where records live: " + described + ".",
     [](config::settings& s, const std::string& raw) -> std::optional<std::string> {
       for (const auto& b : backends())
         if (b.name == raw) {
           s.storage.backend = raw;
           return std::nullopt;
         }
       return "expected one of " + known_names();
     }}};
  for (const auto& b : backends()) out.insert(out.end(), b.options.begin(), b.options.end());
  return out;
}

config::settings located(const config::settings& base, const std::string& where) {
  for (const auto& b : backends())
    if (b.claims && b.claims(where)) return b.at(base, where);
  return backends().front().at(base, where);
}

}  // namespace cl::storage
