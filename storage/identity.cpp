#include "storage/identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cl::storage {

namespace fs = std::filesystem;

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

dev_identity load_or_create_dev_identity(const std::string& data_dir) {
  auto dir = fs::path{data_dir} / "identity";
  fs::create_directories(dir);
  auto key_path = dir / "dev-signing-key.pem";
  auto existing = read_file(key_path.string());
  if (!existing) {
    // Write to a unique temporary file, then link() it into place: link fails if another
    // process won the race, and then its key is the one everybody uses.
    auto key = domain::private_key::generate_rsa(2048);
    auto pem = key.to_pem();
    auto tmp = dir / ("dev-signing-key.pem.tmp." + std::to_string(::getpid()));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) throw std::runtime_error("cannot create " + tmp.string() + ": " + std::strerror(errno));
    bool ok = ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) {
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp.string());
    }
    if (::link(tmp.c_str(), key_path.c_str()) != 0 && errno != EEXIST) {
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot create " + key_path.string() + ": " + std::strerror(errno));
    }
    ::unlink(tmp.c_str());
    existing = read_file(key_path.string());
    if (!existing) throw std::runtime_error("cannot read " + key_path.string());
  }
  auto key = domain::private_key::from_pem(*existing);
  if (!key) throw std::runtime_error(key_path.string() + " is not an RSA private key in PEM form");
  auto kid = key->thumbprint();
  auto jwks = key->jwks_json(kid);
  return dev_identity{std::move(*key), std::move(kid), std::move(jwks)};
}

}  // namespace cl::storage
