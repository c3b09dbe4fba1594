#pragma once
/// What this build is: the version, the commit it was built from, and the data formats it reads
/// and writes (`contentlake --version`, the `contentlake_build_info` metric).

#include <string>
#include <string_view>

namespace cl::app {

/// The release version (CMake's project version).
std::string_view build_version();
/// The commit built from (`git rev-parse --short=12`, `-modified` with uncommitted changes;
/// "unknown" outside a git checkout). Generated at every build.
std::string_view build_commit();
/// The data formats: the default backend's record store (LMDB's) and the search index's.
int record_store_format();
std::string_view search_index_format();

/// One line each: "contentlake <version> (commit <commit>)", then the formats.
std::string version_text();

}  // namespace cl::app
