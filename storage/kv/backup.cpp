#include "storage/kv/backup.hpp"

#include "domain/records.hpp"
#include "storage/identity.hpp"
#include "storage/kv/lmdb_store.hpp"
#include "storage/objects/object_files.hpp"
#include "storage/search/feed.hpp"

#include <boost/json.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cl::storage {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr int backup_format = 1;

/// Copies the regular files of `from` (not temporaries of a file being created) into `to`, mode 0600.
std::vector<std::string> copy_identity(const fs::path& from, const fs::path& to) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(from)) return names;
  fs::create_directories(to);
  ::chmod(to.c_str(), 0700);
  for (const auto& f : fs::directory_iterator{from}) {
    auto name = f.path().filename().string();
    if (!f.is_regular_file() || name.find(".tmp.") != std::string::npos) continue;
    fs::copy_file(f.path(), to / name, fs::copy_options::overwrite_existing);
    ::chmod((to / name).c_str(), 0600);
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void write_text(const fs::path& path, const std::string& text) {  // flushed, not fsynced: a backup is made durable by the operator's copy off the machine
  std::ofstream out{path, std::ios::binary | std::ios::trunc};
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

bool empty_or_missing(const fs::path& dir) {
  std::error_code ec;
  return !fs::exists(dir, ec) || (fs::is_directory(dir, ec) && fs::is_empty(dir, ec));
}

}  // namespace

backup_summary backup_data_dir(const std::string& data_dir, const std::string& to,
                               const std::vector<std::string>& configuration) {
  fs::path target{to};
  if (!empty_or_missing(target)) throw std::runtime_error(to + " is not empty: back up into a new directory");
  if (!fs::exists(fs::path{data_dir} / "lmdb" / "data.mdb"))
    throw std::runtime_error("no data dir at " + data_dir + " (no lmdb/data.mdb)");
  fs::create_directories(target / "lmdb");
  ::chmod(target.c_str(), 0700);
  backup_summary done;
  // 1. The records: one commit's state.
  copy_lmdb(data_dir, (target / "lmdb").string());
  done.record_bytes = fs::file_size(target / "lmdb" / "data.mdb");
  {
    auto copy = open_lmdb_store(target.string(), std::max<std::uint64_t>(1024, done.record_bytes / (1024 * 1024) * 2 + 64));
    done.last_change = copy->last_change();
  }
  std::error_code ec;
  fs::remove(target / "lmdb" / "lock.mdb", ec);
  // 2. The objects, after the records: every object a copied record names is there.
  if (fs::exists(fs::path{data_dir} / "blobs" / "objects")) {
    object_files source{fs::path{data_dir} / "blobs", false};
    object_files copy{target / "blobs"};
    auto objects = source.copy_objects_to(copy);
    done.objects = objects.objects;
    done.object_bytes = objects.bytes;
    fs::remove_all(target / "blobs" / "tmp", ec);
    fs::remove_all(target / "blobs" / "uploads", ec);
  }
  // 3. Keys and secrets; the configuration named (and copied when it exists).
  done.identity_files = copy_identity(fs::path{data_dir} / "identity", target / "identity");
  json::array named;
  for (const auto& file : configuration) {
    bool copied = false;
    if (!file.empty() && fs::is_regular_file(file, ec)) {
      fs::create_directories(target / "config");
      copied = fs::copy_file(file, target / "config" / fs::path{file}.filename(), fs::copy_options::overwrite_existing, ec);
    }
    named.push_back(json::object{{"path", fs::absolute(file).string()}, {"copied", copied}});
  }
  json::array identity;
  for (const auto& n : done.identity_files) identity.push_back(json::string{n});
  json::object manifest{
    {"format", backup_format},
    {"created", domain::iso8601_now()},
    {"source", fs::absolute(data_dir).string()},
    {"record_format", lmdb_format_version},
    {"last_change", done.last_change},
    {"record_bytes", done.record_bytes},
    {"objects", done.objects},
    {"object_bytes", done.object_bytes},
    {"identity", identity},
    {"configuration", named},
    {"search_index", "not copied: `contentlake restore` rebuilds it from the records"},
  };
  write_text(target / "backup.json", json::serialize(manifest) + "\n");
  return done;
}

restore_summary restore_data_dir(const std::string& from, const std::string& data_dir, std::size_t map_size_mib) {
  fs::path source{from}, target{data_dir};
  std::ifstream in{source / "backup.json"};
  if (!in) throw std::runtime_error("no backup at " + from + " (no backup.json)");
  std::string text{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  boost::system::error_code jec;
  auto manifest = json::parse(text, jec);
  if (jec || !manifest.is_object() || !manifest.as_object().if_contains("format")
      || manifest.as_object().at("format").to_number<int>() != backup_format)
    throw std::runtime_error(from + "/backup.json is not a backup this version can restore");
  if (fs::exists(target / "lmdb" / "data.mdb"))
    throw std::runtime_error(data_dir + " already holds a record store: restore into a new or empty directory");
  restore_summary done;
  fs::create_directories(target / "lmdb");
  fs::copy_file(source / "lmdb" / "data.mdb", target / "lmdb" / "data.mdb");
  if (fs::exists(source / "blobs" / "objects")) {
    object_files backup{source / "blobs", false};
    object_files restored{target / "blobs"};
    done.objects = backup.copy_objects_to(restored).objects;
  }
  copy_identity(source / "identity", target / "identity");
  done.epoch = new_log_epoch(data_dir);
  auto store = open_lmdb_store(data_dir, map_size_mib);
  done.last_change = store->last_change();
  std::error_code ec;
  fs::remove_all(target / "search", ec);
  done.documents = rebuild_index(target / "search", *store).documents;
  if (const auto* named = manifest.as_object().if_contains("configuration"); named && named->is_array())
    for (const auto& f : named->as_array())
      if (f.is_object() && f.as_object().if_contains("path") && f.as_object().at("path").is_string())
        done.configuration.emplace_back(f.as_object().at("path").as_string());
  return done;
}

}  // namespace cl::storage
