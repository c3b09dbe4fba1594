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
#include <sstream>
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

const char* const secrets_file_header =
  "# contentlake secrets (format 1), made by `contentlake secrets init`. Every node of one cluster\n"
  "# reads this same file (secrets.file). Keep it as secret as a private key; never edit it.\n";

/// `name`'s value in the secrets file at `path` (its line `name <base64url>`).
std::string from_secrets_file(const std::string& path, const std::string& name) {
  auto text = config::read_file(path);
  if (!text) throw std::runtime_error("secrets.file " + path + " cannot be read");
  std::istringstream lines{*text};
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto space = line.find(' ');
    if (space == std::string::npos || line.compare(0, space, name) != 0 || space != name.size()) continue;
    auto value = domain::base64url_decode(line.substr(space + 1));
    if (!value || value->empty()) throw std::runtime_error("secrets.file " + path + ": the value of " + name + " is not base64url");
    return *value;
  }
  throw std::runtime_error("secrets.file " + path + " holds no " + name
                           + ": make a new file with `contentlake secrets init --to FILE` and give it to every node");
}

/// The secret `name` of `place`: from its secrets file, else from its data dir (created once by `make`).
std::string secret_of(const secret_place& place, const std::string& name, const std::function<std::string()>& make) {
  if (!place.file.empty()) return from_secrets_file(place.file, name);
  return load_or_create(place.data_dir, name, make);
}

std::string random_secret() { return domain::random_bytes(32); }
std::string random_text_secret() { return domain::base64url_encode(domain::random_bytes(32)); }
std::string new_dev_key() { return domain::private_key::generate_rsa(2048).to_pem(); }

/// Each secret a secrets file holds, and how a new one is made.
const std::vector<std::pair<std::string, std::string (*)()>>& shared_secrets() {
  static const std::vector<std::pair<std::string, std::string (*)()>> all = {
    {"page-token.key", random_secret},         {"feed-cursor.key", random_secret},
    {"webhook-secrets.key", random_secret},    {"edge-purge-secret", random_text_secret},
    {"dev-signing-key.pem", new_dev_key},
  };
  return all;
}

}  // namespace

const std::vector<std::string>& shared_secret_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& secret : shared_secrets()) out.push_back(secret.first);
    return out;
  }();
  return names;
}

void write_secrets_file(const std::string& path) {
  std::string content = secrets_file_header;
  for (const auto& [name, make] : shared_secrets()) content += name + " " + domain::base64url_encode(make()) + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw std::runtime_error(errno == EEXIST ? path + " exists: a secrets file is never overwritten (the nodes reading it "
                                                      "would refuse every page token, cursor and webhook secret sealed with it)"
                                             : "cannot create " + path + ": " + std::strerror(errno));
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    throw std::runtime_error("cannot write " + path);
  }
}

std::string load_or_create_secret(const secret_place& place, const std::string& name) {
  return secret_of(place, name, random_secret);
}

std::string secrets_fingerprint(const secret_place& place) {
  std::string keys;
  for (const char* name : {"page-token.key", "feed-cursor.key", "webhook-secrets.key"}) {
    auto key = load_or_create_secret(place, name);
    keys += std::to_string(key.size()) + ":" + key;
  }
  return domain::hex_encode(domain::hmac_sha256("contentlake secrets fingerprint 1", keys)).substr(0, 16);
}

std::string load_or_create_text_secret(const secret_place& place, const std::string& name) {
  return secret_of(place, name, random_text_secret);
}

std::string log_epoch(const std::string& data_dir) {
  return config::read_file((fs::path{data_dir} / "identity" / "log-epoch").string()).value_or(std::string{});
}

std::string new_log_epoch(const std::string& data_dir) {
  std::error_code ec;
  fs::remove(fs::path{data_dir} / "identity" / "log-epoch", ec);
  return load_or_create(data_dir, "log-epoch", [] { return domain::hex_encode(domain::random_bytes(8)); });
}

std::shared_ptr<const domain::feed_cursor_codec> feed_codec(const secret_place& place, const std::string& deployment) {
  return std::make_shared<const domain::feed_cursor_codec>(load_or_create_secret(place, "feed-cursor.key"),
                                                           log_epoch(place.data_dir), deployment);
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

dev_identity identity_of(const std::string& pem, const secret_place& place, const std::vector<std::string>& never_trusted) {
  auto key_path = place.file.empty() ? dev_key_path(place.data_dir) : "dev-signing-key.pem of " + place.file;
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

dev_identity load_or_create_dev_identity(const secret_place& place, const std::vector<std::string>& never_trusted) {
  return identity_of(secret_of(place, "dev-signing-key.pem", new_dev_key), place, never_trusted);
}

std::optional<dev_identity> load_dev_identity(const secret_place& place, const std::vector<std::string>& never_trusted) {
  auto pem = place.file.empty() ? config::read_file(dev_key_path(place.data_dir))
                                : std::optional<std::string>{from_secrets_file(place.file, "dev-signing-key.pem")};
  if (!pem) return std::nullopt;
  return identity_of(*pem, place, never_trusted);
}

}  // namespace cl::storage
