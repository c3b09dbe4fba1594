// The LMDB backend as a component (storage/backend.hpp): records in `<data_dir>/lmdb`, one node,
// backed up and restored with the data dir; its section is `storage.map_size_mib`.

#include "storage/backend.hpp"
#include "storage/kv/backup.hpp"
#include "storage/kv/lmdb_store.hpp"

#include <filesystem>

namespace cl::storage {

namespace {

struct lmdb_section {
  std::size_t map_size_mib = 1024;
};

class lmdb_backend_impl final : public backend {
public:
  using backend::backend;

  std::shared_ptr<record_store> open_records() override {
    std::filesystem::create_directories(settings().data_dir);
    return open_lmdb_store(settings().data_dir, map_size());
  }

  std::shared_ptr<record_store> open_records_to_read() override {
    if (!std::filesystem::exists(std::filesystem::path{settings().data_dir} / "lmdb"))
      throw std::runtime_error(settings().data_dir + " holds no record store (no lmdb/ in it)");
    return open_lmdb_store_read_only(settings().data_dir);
  }

  backup_summary backup(const std::string& to, const std::vector<std::string>& configuration) override {
    return backup_data_dir(settings().data_dir, to, configuration);
  }

  restore_summary restore(const std::string& from) override {
    return restore_data_dir(from, settings().data_dir, map_size());
  }

  /// A file, or a directory that holds something but is no data dir (`--to /etc`): refused. Absent,
  /// empty, or a data dir (it holds `lmdb/`, or `identity/` copied there first to keep the
  /// source's keys): taken.
  std::string unusable_target() const override {
    namespace fs = std::filesystem;
    const auto& where = settings().data_dir;
    fs::path dir{where};
    std::error_code ec;
    if (!fs::exists(dir, ec)) return {};
    if (!fs::is_directory(dir, ec)) return where + " is not a directory";
    if (fs::is_empty(dir, ec) || fs::exists(dir / "lmdb", ec) || fs::exists(dir / "identity", ec)) return {};
    return where + " is neither empty nor a data dir (it holds no lmdb/ or identity/): name a new or empty directory";
  }

private:
  std::size_t map_size() const { return settings().groups.get<lmdb_section>().map_size_mib; }
};

}  // namespace

backend_entry lmdb_backend() {
  backend_entry e;
  e.name = "lmdb";
  e.summary = "in the data dir, one node";
  e.traits.format = lmdb_format_version;
  e.options = {{"storage.map_size_mib", "1024", "LMDB map size (upper bound of the database size).",
                config::integer_member(&lmdb_section::map_size_mib, 1, 1LL << 24)}};
  e.make = &make_backend<lmdb_backend_impl>;
  e.at = [](config::settings base, const std::string& where) {
    base.storage.backend = "lmdb";
    base.data_dir = where;
    return base;
  };
  return e;
}

}  // namespace cl::storage
