#include "config/watched_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

namespace cl::config {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in) return std::nullopt;
  return std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

long long file_signature(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec
         + static_cast<long long>(st.st_size) * 7919LL + static_cast<long long>(st.st_ino);
}

}  // namespace cl::config
