#include "storage/objects/object_files.hpp"

#include "domain/base64url.hpp"
#include "domain/clock.hpp"
#include "domain/ids.hpp"
#include "domain/sigv4.hpp"
#include "storage/objects/direct_buffer.hpp"

#include <boost/json.hpp>
#include <openssl/evp.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <limits>
#include <stdexcept>
#include <system_error>

namespace cl::storage {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/// Throws the failed call's errno as a std::system_error (callers tell a full disk, ENOSPC, EDQUOT
/// or EFBIG, from other failures by its code: storage::disk_full).
[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "object store: " + what);
}

/// An incremental digest (SHA-256 or MD5).
class digest {
public:
  explicit digest(const EVP_MD* md) : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, md, nullptr); }
  ~digest() { EVP_MD_CTX_free(ctx_); }
  digest(const digest&) = delete;
  digest& operator=(const digest&) = delete;
  void update(std::string_view bytes) { EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()); }
  /// The digest so far (a copy of the context is finalised, so updating may go on).
  std::string hex_value() const {
    EVP_MD_CTX* copy = EVP_MD_CTX_new();
    EVP_MD_CTX_copy_ex(copy, ctx_);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex(copy, out, &n);
    EVP_MD_CTX_free(copy);
    return domain::hex_encode(std::string_view{reinterpret_cast<const char*>(out), n});
  }

private:
  EVP_MD_CTX* ctx_;
};

void fsync_path(const fs::path& p, bool directory) {
  int fd = ::open(p.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) fail("open " + p.filename().string());
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  ::close(fd);
}

void write_file_synced(const fs::path& p, std::string_view text) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) fail("create " + p.filename().string());
  for (std::size_t done = 0; done < text.size();) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  ::close(fd);
}

std::string meta_text(const object_info& i) {
  return json::serialize(json::object{{"bucket", i.bucket},
                                      {"key", i.key},
                                      {"size", i.size},
                                      {"sha256", i.sha256},
                                      {"etag", i.etag},
                                      {"content_type", i.content_type},
                                      {"modified", i.modified}});
}

std::optional<object_info> read_meta(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  if (!in) return std::nullopt;
  std::string text{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto str = [&](const char* n) {
    auto* x = o.if_contains(n);
    return x && x->is_string() ? std::string{x->as_string()} : std::string{};
  };
  object_info i;
  i.bucket = str("bucket");
  i.key = str("key");
  i.sha256 = str("sha256");
  i.etag = str("etag");
  i.content_type = str("content_type");
  if (auto* s = o.if_contains("size")) i.size = s->to_number<std::uint64_t>();
  if (auto* m = o.if_contains("modified")) i.modified = m->to_number<std::int64_t>();
  return i;
}

/// Bytes a copy inside the store (a backup, a multipart completion) reads and writes at a time.
constexpr std::size_t copy_chunk = 4 << 20;

class file_incoming final : public object_files::incoming {
public:
  file_incoming(fs::path dir, std::uint64_t flush_every)
    : dir_(std::move(dir)), flush_every_(flush_every), sha_(EVP_sha256()), md5_(EVP_md5()) {
    fs::create_directories(dir_);
    auto path = (dir_ / "data");
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    direct_ = fd_ >= 0;
    if (fd_ < 0 && errno == EINVAL) fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);  // tmpfs
    if (fd_ < 0) fail("create a temporary object");
  }
  ~file_incoming() override {
    if (fd_ >= 0) ::close(fd_);
    std::error_code ec;
    if (!kept_) fs::remove_all(dir_, ec);
  }

  void write(std::string_view bytes) override {
    constexpr auto block = object_files::direct_alignment;
    if (direct_ && (reinterpret_cast<std::uintptr_t>(bytes.data()) % block || bytes.size() % block || size_ % block))
      buffered();
    for (std::size_t done = 0; done < bytes.size();) {
      auto n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EINVAL && direct_) {  // the file system takes no direct writes after all
          buffered();
          continue;
        }
        fail("write");
      }
      done += static_cast<std::size_t>(n);
    }
    size_ += bytes.size();
    if (direct_ && flush_every_ && size_ - flushed_ >= flush_every_) {
      if (::fdatasync(fd_) != 0) fail("fdatasync");
      flushed_ = size_;
    }
    // Written through the page cache: its writeback starts now rather than all at the fsync.
    constexpr std::uint64_t kick = 8 << 20;
    if (!direct_ && size_ - flushed_ >= kick) {
      ::sync_file_range(fd_, static_cast<off_t>(flushed_), static_cast<off_t>(size_ - flushed_), SYNC_FILE_RANGE_WRITE);
      flushed_ = size_;
    }
  }
  void add_to_sha256(std::string_view bytes) override { sha_.update(bytes); }
  void add_to_md5(std::string_view bytes) override { md5_.update(bytes); }
  std::uint64_t size() const override { return size_; }
  std::string sha256() const override { return sha_.hex_value(); }
  std::string md5() const override { return md5_.hex_value(); }

  /// Makes the data durable and writes its meta beside it; the directory is then ready to rename.
  void seal(const object_info& info) {
    if (::fsync(fd_) != 0) fail("fsync");
    ::close(fd_);
    fd_ = -1;
    write_file_synced(dir_ / "meta", meta_text(info));
    fsync_path(dir_, true);
  }
  const fs::path& dir() const { return dir_; }
  void keep() { kept_ = true; }

private:
  /// From here on through the page cache.
  void buffered() {
    int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) fail("fcntl");
    direct_ = false;
    flushed_ = size_;
  }

  fs::path dir_;
  int fd_ = -1;
  bool direct_ = false;  ///< writes bypass the page cache (until one is not aligned)
  std::uint64_t flush_every_;  ///< direct bytes between fdatasyncs (0: all at the seal)
  digest sha_, md5_;
  std::uint64_t size_ = 0;
  std::uint64_t flushed_ = 0;  ///< bytes made durable (direct) or whose writeback was started
  bool kept_ = false;
};

/// A file read from its start to its end (a part, when a multipart upload is assembled).
class file_reader {
public:
  ~file_reader() { close(); }
  bool open() const { return fd_ >= 0; }
  void open_file(const fs::path& p) {
    close();
    fd_ = ::open(p.c_str(), O_RDONLY);
    if (fd_ < 0) fail("open " + p.filename().string());
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  /// Up to `n` bytes into `into`; 0 at the end.
  std::size_t read(char* into, std::size_t n) {
    for (;;) {
      auto got = ::read(fd_, into, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) fail("read");
    }
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_ = -1;
};

/// Appends to `in` what `fill(buffer, room)` reads (`room` bytes but at the end; 0 then), with the
/// write and the SHA-256 of each buffer on a thread of their own beside the next read: a copy
/// inside the store goes at the speed of its slowest stage rather than of their sum. Three
/// buffers of copy_chunk bytes at most.
void append_pipelined(file_incoming& in, const std::function<std::size_t(char*, std::size_t)>& fill) {
  constexpr int depth = 3;
  std::vector<std::unique_ptr<direct_buffer>> buffers;  // outlives the jobs (their futures go first)
  std::shared_future<void> last_write, last_hash;
  std::shared_future<void> wrote[depth], hashed[depth];
  for (int k = 0;; ++k) {
    auto slot = k % depth;
    if (wrote[slot].valid()) {  // this buffer's last jobs are done (get rethrows what they threw)
      wrote[slot].get();
      hashed[slot].get();
    } else {
      buffers.push_back(std::make_unique<direct_buffer>(copy_chunk));
    }
    auto n = fill(buffers[slot]->data(), copy_chunk);
    if (n == 0) break;
    std::string_view bytes{buffers[slot]->data(), n};
    // Each stage in the order of the bytes: a job waits for the one before it.
    last_write = wrote[slot] = std::async(std::launch::async, [&in, bytes, before = last_write] {
                                 if (before.valid()) before.get();
                                 in.write(bytes);
                               }).share();
    last_hash = hashed[slot] = std::async(std::launch::async, [&in, bytes, before = last_hash] {
                                 if (before.valid()) before.get();
                                 in.add_to_sha256(bytes);
                               }).share();
  }
  if (last_write.valid()) last_write.get();
  if (last_hash.valid()) last_hash.get();
}

/// The ETag of a body stored whole: as long as an MD5's, from the SHA-256 (object_info::etag).
std::string etag_of(const object_files::incoming& in) {
  return in.sha256().substr(0, 32);
}

/// Renames the sealed `from` directory to `to`, replacing a previous one, which goes to `trash`
/// (answers whether there was one); then syncs the parent.
bool install_keeping(const fs::path& from, const fs::path& to, const fs::path& trash) {
  fs::create_directories(to.parent_path());
  bool replaced = fs::exists(to);
  if (replaced) fs::rename(to, trash);  // a replaced object goes aside first (rename is atomic)
  fs::rename(from, to);
  fsync_path(to.parent_path(), true);
  return replaced;
}

/// The same, the replaced directory removed.
void install(const fs::path& from, const fs::path& to, const fs::path& trash) {
  std::error_code ec;
  if (install_keeping(from, to, trash)) fs::remove_all(trash, ec);
}

/// Seals `in` with `info` and installs it at `to` (one rename); answers whether it replaced one
/// (left at `trash`).
bool commit(file_incoming& in, const object_info& info, const fs::path& to, const fs::path& trash) {
  in.seal(info);
  bool replaced = install_keeping(in.dir(), to, trash);
  in.keep();
  return replaced;
}

}  // namespace

namespace {

/// The time a closed-key marker holds; 0 when unreadable (treated as closed for good: refusing a
/// PUT is the safe side).
std::int64_t marker_until(const fs::path& marker) {
  std::ifstream in{marker};
  std::int64_t until = 0;
  if (!(in >> until)) return std::numeric_limits<std::int64_t>::max();
  return until;
}

}  // namespace

object_files::object_files(fs::path root, bool remove_leftovers) : root_(std::move(root)) {
  for (const char* d : {"objects", "uploads", "closed", "tmp"}) fs::create_directories(root_ / d);
  if (!remove_leftovers) return;
  std::error_code ec;
  for (const auto& leftover : fs::directory_iterator{root_ / "tmp"}) fs::remove_all(leftover.path(), ec);
  auto now = domain::now_seconds();
  for (const auto& marker : fs::directory_iterator{root_ / "closed"})
    if (marker_until(marker.path()) < now) fs::remove(marker.path(), ec);
}

bool object_files::valid_key(std::string_view key) {
  if (key.empty() || key.size() > 1024) return false;
  for (unsigned char c : key)
    if (c < 0x20 || c == 0x7f) return false;
  std::size_t start = 0;
  for (;;) {
    auto slash = key.find('/', start);
    auto segment = key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

fs::path object_files::object_dir(const std::string& bucket, const std::string& key) const {
  auto name = domain::sigv4::sha256_hex(bucket + "/" + key);
  return root_ / "objects" / name.substr(0, 2) / name;
}

fs::path object_files::fresh_tmp() {
  return root_ / "tmp" / domain::random_id("tmp_");
}

std::unique_ptr<object_files::incoming> object_files::receive(std::uint64_t flush_every) {
  return std::make_unique<file_incoming>(fresh_tmp(), flush_every);
}

object_info object_files::commit_object(std::shared_ptr<incoming> body, const std::string& bucket,
                                        const std::string& key, const std::string& content_type) {
  auto& in = dynamic_cast<file_incoming&>(*body);
  object_info info{bucket, key, in.size(), in.sha256(), etag_of(in), content_type, domain::now_seconds()};
  auto trash = fresh_tmp();
  if (commit(in, info, object_dir(bucket, key), trash)) set_aside(trash);
  return info;
}

void object_files::set_aside(const fs::path& trash) {
  std::lock_guard<std::mutex> guard{trash_mutex_};
  trash_.push_back(trash);
}

void object_files::empty_trash() {
  std::vector<fs::path> gone;
  {
    std::lock_guard<std::mutex> guard{trash_mutex_};
    gone.swap(trash_);
  }
  std::error_code ignored;
  for (const auto& p : gone) fs::remove_all(p, ignored);
}

bool disk_full(const std::exception& e) {
  const auto* failure = dynamic_cast<const std::system_error*>(&e);
  if (!failure) return false;
  auto code = failure->code().value();
  return failure->code().category() == std::generic_category() && (code == ENOSPC || code == EDQUOT || code == EFBIG);
}

object_files::copy_summary object_files::copy_objects_to(object_files& target) const {
  copy_summary done;
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator{root_ / "objects", ec}) {
    std::error_code inner;
    for (const auto& object : fs::directory_iterator{shard.path(), inner}) {
      for (int attempt = 0; attempt < 3; ++attempt) {
        auto info = read_meta(object.path() / "meta");
        std::ifstream data{object.path() / "data", std::ios::binary};
        if (!info || !data) break;  // removed since it was listed
        auto body = target.receive();
        direct_buffer chunk{copy_chunk};
        while (data.read(chunk.data(), static_cast<std::streamsize>(copy_chunk)) || data.gcount() > 0)
          body->append(std::string_view{chunk.data(), static_cast<std::size_t>(data.gcount())});
        if (body->sha256() != info->sha256) continue;  // replaced while it was read: read it again
        auto& in = dynamic_cast<file_incoming&>(*body);
        auto trash = target.fresh_tmp();
        std::error_code ignored;
        if (commit(in, *info, target.object_dir(info->bucket, info->key), trash)) fs::remove_all(trash, ignored);
        ++done.objects;
        done.bytes += info->size;
        break;
      }
    }
  }
  for (const auto& closed : fs::directory_iterator{root_ / "closed", ec})
    fs::copy_file(closed.path(), target.root_ / "closed" / closed.path().filename(),
                  fs::copy_options::overwrite_existing, ec);
  return done;
}

std::optional<object_info> object_files::stat(const std::string& bucket, const std::string& key) const {
  return read_meta(object_dir(bucket, key) / "meta");
}

std::optional<fs::path> object_files::data_path(const std::string& bucket, const std::string& key) const {
  auto dir = object_dir(bucket, key);
  if (!fs::exists(dir / "meta")) return std::nullopt;
  return dir / "data";
}

bool object_files::remove(const std::string& bucket, const std::string& key) {
  auto dir = object_dir(bucket, key);
  if (!fs::exists(dir)) return false;
  auto trash = fresh_tmp();
  fs::rename(dir, trash);  // gone at once for readers; the bytes are removed after
  fs::remove_all(trash);
  return true;
}

bool object_files::move(const std::string& bucket, const std::string& from, const std::string& to) {
  auto source = object_dir(bucket, from);
  if (!fs::exists(source / "meta")) return false;
  install(source, object_dir(bucket, to), fresh_tmp());
  fsync_path(source.parent_path(), true);
  // The meta names the key it was written under; readers never go by it, but keep it true.
  if (auto info = read_meta(object_dir(bucket, to) / "meta")) {
    info->key = to;
    auto fresh = object_dir(bucket, to) / "meta.new";
    write_file_synced(fresh, meta_text(*info));
    fs::rename(fresh, object_dir(bucket, to) / "meta");
  }
  return true;
}

fs::path object_files::closed_marker(const std::string& bucket, const std::string& key) const {
  return root_ / "closed" / domain::sigv4::sha256_hex(bucket + "/" + key);
}

void object_files::close_key(const std::string& bucket, const std::string& key, std::int64_t until) {
  auto marker = closed_marker(bucket, key);
  auto fresh = fresh_tmp();
  write_file_synced(fresh, std::to_string(until));
  fs::rename(fresh, marker);
  fsync_path(marker.parent_path(), true);
}

void object_files::reopen_key(const std::string& bucket, const std::string& key) {
  std::error_code ec;
  fs::remove(closed_marker(bucket, key), ec);
}

bool object_files::closed(const std::string& bucket, const std::string& key) const {
  auto marker = closed_marker(bucket, key);
  std::error_code ec;
  if (!fs::exists(marker, ec)) return false;
  return marker_until(marker) >= domain::now_seconds();
}

std::string object_files::create_upload(const std::string& bucket, const std::string& key,
                                        const std::string& content_type) {
  auto id = domain::random_id("mpu_");
  auto tmp = fresh_tmp();
  fs::create_directories(tmp);
  write_file_synced(tmp / "meta", meta_text(object_info{bucket, key, 0, {}, {}, content_type, 0}));
  install(tmp, root_ / "uploads" / id, fresh_tmp());
  return id;
}

std::optional<object_info> object_files::upload(const std::string& upload_id) const {
  // Only ids this store issued (mpu_ + lower-case letters and digits) name a directory.
  bool issued = upload_id.size() > 4 && upload_id.size() <= 64 && upload_id.rfind("mpu_", 0) == 0
                && std::all_of(upload_id.begin() + 4, upload_id.end(), [](char c) {
                     return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                   });
  if (!issued) return std::nullopt;
  return read_meta(root_ / "uploads" / upload_id / "meta");
}

std::optional<object_info> object_files::commit_part(std::shared_ptr<incoming> body, const std::string& upload_id,
                                                     int number) {
  auto target = upload(upload_id);
  if (!target) return std::nullopt;
  auto& in = dynamic_cast<file_incoming&>(*body);
  object_info info{target->bucket, target->key, in.size(), in.sha256(), etag_of(in), target->content_type,
                   domain::now_seconds()};
  auto trash = fresh_tmp();
  if (commit(in, info, root_ / "uploads" / upload_id / ("part-" + std::to_string(number)), trash)) set_aside(trash);
  return info;
}

std::vector<std::pair<int, object_info>> object_files::parts(const std::string& upload_id) const {
  std::vector<std::pair<int, object_info>> out;
  if (!upload(upload_id)) return out;
  for (const auto& entry : fs::directory_iterator{root_ / "uploads" / upload_id}) {
    auto name = entry.path().filename().string();
    if (name.rfind("part-", 0) != 0) continue;
    if (auto info = read_meta(entry.path() / "meta")) out.emplace_back(std::stoi(name.substr(5)), std::move(*info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

complete_error object_files::complete_upload(const std::string& upload_id,
                                             const std::vector<std::pair<int, std::string>>& listed,
                                             std::uint64_t min_part_size, object_info& out,
                                             const std::string& expected_sha256) {
  auto target = upload(upload_id);
  if (!target) return complete_error::no_such_upload;
  if (listed.empty()) return complete_error::invalid_part;
  auto stored = parts(upload_id);
  auto find = [&](int n) -> const object_info* {
    for (const auto& [number, info] : stored)
      if (number == n) return &info;
    return nullptr;
  };
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (i > 0 && listed[i].first <= listed[i - 1].first) return complete_error::invalid_part_order;
    const auto* part = find(listed[i].first);
    auto etag = listed[i].second;
    etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
    if (!part || part->etag != etag) return complete_error::invalid_part;
    if (i + 1 < listed.size() && part->size < min_part_size) return complete_error::entity_too_small;
  }
  // Concatenate into a new body (hashing it whole), then install it like a single upload.
  auto body = receive();
  auto& in = dynamic_cast<file_incoming&>(*body);
  digest etag_of_etags{EVP_md5()};
  for (const auto& [number, etag] : listed) {
    const auto* part = find(number);
    std::string raw_md5;
    for (std::size_t i = 0; i + 1 < part->etag.size(); i += 2)
      raw_md5.push_back(static_cast<char>(std::stoi(part->etag.substr(i, 2), nullptr, 16)));
    etag_of_etags.update(raw_md5);
  }
  // The parts one after the other, each buffer filled across their boundaries: every write but
  // the last is whole and aligned, so the copy goes to the disk without the page cache.
  std::size_t next = 0;
  file_reader part;
  append_pipelined(in, [&](char* into, std::size_t room) {
    std::size_t got = 0;
    while (got < room) {
      if (!part.open()) {
        if (next == listed.size()) break;
        part.open_file(root_ / "uploads" / upload_id / ("part-" + std::to_string(listed[next++].first)) / "data");
      }
      auto n = part.read(into + got, room - got);
      if (n == 0) part.close();
      got += n;
    }
    return got;
  });
  // A difference drops the assembled copy (its temporary files go with `body`); the parts stay.
  if (!expected_sha256.empty() && in.sha256() != expected_sha256) return complete_error::checksum_mismatch;
  out = object_info{target->bucket, target->key, in.size(), in.sha256(),
                    etag_of_etags.hex_value() + "-" + std::to_string(listed.size()), target->content_type,
                    domain::now_seconds()};
  auto trash = fresh_tmp();
  std::error_code ignored;
  if (commit(in, out, object_dir(target->bucket, target->key), trash)) fs::remove_all(trash, ignored);
  abort_upload(upload_id);
  return complete_error::none;
}

bool object_files::abort_upload(const std::string& upload_id) {
  if (!upload(upload_id)) return false;
  auto trash = fresh_tmp();
  fs::rename(root_ / "uploads" / upload_id, trash);
  fs::remove_all(trash);
  return true;
}

}  // namespace cl::storage
