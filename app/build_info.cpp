#include "app/build_info.hpp"

#include "storage/backend.hpp"
#include "storage/search/index.hpp"

namespace cl::app {

std::string_view build_version() { return CONTENTLAKE_VERSION; }

int record_store_format() { return storage::backends().front().traits.format; }

std::string_view search_index_format() { return storage::search_index::format(); }

std::string version_text() {
  return "contentlake " + std::string{build_version()} + " (commit " + std::string{build_commit()} + ")\n"
         + "data formats: record store " + std::to_string(record_store_format()) + ", search index "
         + std::string{search_index_format()} + " (reads older ones and migrates or rebuilds them at start)\n";
}

}  // namespace cl::app
