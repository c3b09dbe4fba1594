#include "storage/identity.hpp"

#include "domain/aead.hpp"
#include "domain/base64url.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

namespace cl::storage {

namespace fs = std::filesystem;


namespace {

/// The content of `<data_dir>/identity/<name>`, created from `make()` (mode 0600) if missing.
/// The file is written to a unique temporary name and link()ed into place: link fails if another
/// process won the race, and then its content is the one everybody uses.
std::string load_or_create(const std::string& data_dir, const std::string& name, const std::function<std::string()>& make) {
  auto dir = fs::path{data_dir} / "identity";
  fs::create_directories(dir);
  auto path = dir / name;
  if (auto existing = config::read_file(path.string())) return *existing;
  auto content = make();
  auto tmp = dir / (name + ".tmp." + std::to_string(::getpid()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp.string() + ": " + std::strerror(errno));
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + tmp.string());
  }
  if (::link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
  }
  ::unlink(tmp.c_str());
  auto stored = config::read_file(path.string());
  if (!stored) throw std::runtime_error("cannot read " + path.string());
  return *stored;
}

}  // namespace

std::string load_or_create_secret(const std::string& data_dir, const std::string& name) {
  return load_or_create(data_dir, name, [] {
    return domain::random_bytes(32);
  });
}

std::string load_or_create_text_secret(const std::string& data_dir, const std::string& name) {
  return load_or_create(data_dir, name, [] { return domain::base64url_encode(domain::random_bytes(32)); });
}

std::string log_epoch(const std::string& data_dir) {
  return config::read_file((fs::path{data_dir} / "identity" / "log-epoch").string()).value_or(std::string{});
}

std::string new_log_epoch(const std::string& data_dir) {
  std::error_code ec;
  fs::remove(fs::path{data_dir} / "identity" / "log-epoch", ec);
  return load_or_create(data_dir, "log-epoch", [] { return domain::hex_encode(domain::random_bytes(8)); });
}

std::shared_ptr<const domain::feed_cursor_codec> feed_codec(const std::string& data_dir) {
  return std::make_shared<const domain::feed_cursor_codec>(load_or_create_secret(data_dir, "feed-cursor.key"),
                                                           log_epoch(data_dir));
}

s3_credentials load_or_create_s3_credentials(const std::string& data_dir) {
  auto random_text = [](std::size_t n, std::string_view alphabet) {
    auto bytes = domain::random_bytes(n);
    std::string out;
    for (unsigned char b : bytes) out.push_back(alphabet[b % alphabet.size()]);
    return out;
  };
  s3_credentials c;
  c.access_key_id = load_or_create(data_dir, "blobs-access-key-id", [&] {
    return "CL" + random_text(18, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");  // 32 symbols: no modulo bias
  });
  c.secret_access_key = load_or_create(data_dir, "blobs-secret-access-key", [&] {
    return random_text(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");  // 64 symbols
  });
  return c;
}

const std::vector<std::string>& published_key_ids() {
  // d/identity/dev-signing-key.pem, committed before 2026-11-22 and removed: treated as published.
  static const std::vector<std::string> ids = {"rpEeB0_1zWjnX3yWAniZg3CTuGOSssV6Dx9EVH_sBok"};
  return ids;
}

namespace {

dev_identity identity_of(const std::string& pem, const std::string& data_dir, const std::vector<std::string>& never_trusted) {
  auto key_path = dev_key_path(data_dir);
  auto key = domain::private_key::from_pem(pem);
  if (!key) throw std::runtime_error(key_path + " is not an RSA private key in PEM form");
  auto kid = key->thumbprint();
  // Anyone holding a published key could mint tokens this service accepts.
  for (const auto& p : never_trusted)
    if (kid == p)
      throw std::runtime_error(key_path
                               + " is a published key (it was committed to the contentlake repository) and is never "
                                 "trusted; delete it and a new one is generated at the next start");
  auto jwks = key->jwks_json(kid);
  return dev_identity{std::move(*key), std::move(kid), std::move(jwks)};
}

}  // namespace

std::string dev_key_path(const std::string& data_dir) {
  return (fs::path{data_dir} / "identity" / "dev-signing-key.pem").string();
}

dev_identity load_or_create_dev_identity(const std::string& data_dir, const std::vector<std::string>& never_trusted) {
  auto pem = load_or_create(data_dir, "dev-signing-key.pem",
                            [] { return domain::private_key::generate_rsa(2048).to_pem(); });
  return identity_of(pem, data_dir, never_trusted);
}

std::optional<dev_identity> load_dev_identity(const std::string& data_dir, const std::vector<std::string>& never_trusted) {
  auto pem = config::read_file(dev_key_path(data_dir));
  if (!pem) return std::nullopt;
  return identity_of(*pem, data_dir, never_trusted);
}

}  // namespace cl::storage
