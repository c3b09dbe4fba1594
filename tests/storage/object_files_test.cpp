// The embedded object store's files: whole objects and multipart uploads appear only when
// committed (one rename), with the SHA-256 and ETag of what was received.

#include "domain/sigv4.hpp"
#include "storage/objects/direct_buffer.hpp"
#include "storage/objects/object_files.hpp"
#include "tests/support/service_fixture.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

using cl::storage::complete_error;
using cl::storage::object_files;
using cl::storage::object_info;
using cl::testing::temp_dir;

namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in{p, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

std::unique_ptr<object_files::incoming> body(object_files& files, const std::string& bytes, std::size_t chunk = 3) {
  auto in = files.receive();
  for (std::size_t i = 0; i < bytes.size(); i += chunk) in->append(std::string_view{bytes}.substr(i, chunk));
  return in;
}

}  // namespace

TEST_CASE("an object appears whole when committed, with the digests of what was received", "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  auto in = body(files, "hello, tides");
  CHECK(in->size() == 12);
  CHECK_FALSE(files.stat("contentlake", "t/blb_1/1"));
  auto info = files.commit_object(std::move(in), "contentlake", "t/blb_1/1", "text/plain");
  CHECK(info.sha256 == cl::domain::sigv4::sha256_hex("hello, tides"));
  CHECK(info.etag.size() == 32);
  auto again = files.stat("contentlake", "t/blb_1/1");
  REQUIRE(again);
  CHECK(again->size == 12);
  CHECK(again->content_type == "text/plain");
  CHECK(read_all(*files.data_path("contentlake", "t/blb_1/1")) == "hello, tides");
  CHECK_FALSE(files.stat("other-bucket", "t/blb_1/1"));

  files.commit_object(body(files, "neap"), "contentlake", "t/blb_1/1", "text/plain");  // replaced
  CHECK(read_all(*files.data_path("contentlake", "t/blb_1/1")) == "neap");
  CHECK(files.remove("contentlake", "t/blb_1/1"));
  CHECK_FALSE(files.stat("contentlake", "t/blb_1/1"));
  CHECK_FALSE(files.remove("contentlake", "t/blb_1/1"));
}

TEST_CASE("a body never committed is never visible, and its files are gone after a restart", "[storage][objects]") {
  temp_dir dir;
  std::unique_ptr<object_files::incoming> crashed;  // outlives the restart below, as a crash's would
  {
    object_files files{dir.path + "/blobs"};
    crashed = body(files, std::string(100000, 'x'));
    // a crash now: the body is neither committed nor abandoned
  }
  object_files reopened{dir.path + "/blobs"};
  CHECK(std::filesystem::is_empty(dir.path + "/blobs/tmp"));
  CHECK(std::filesystem::is_empty(dir.path + "/blobs/objects"));
  crashed.reset();  // its files are already gone: dropping it now finds nothing to remove
  {
    auto dropped = body(reopened, "abandoned");  // dropped without commit
  }
  CHECK(std::filesystem::is_empty(dir.path + "/blobs/tmp"));
}

TEST_CASE("a multipart upload: parts replaced, checked on completion, assembled in order", "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  auto id = files.create_upload("contentlake", "t/blb_2/1", "application/octet-stream");
  REQUIRE(files.upload(id));
  auto p1 = files.commit_part(body(files, "aaaaa"), id, 1);
  auto p2 = files.commit_part(body(files, "bbbXX"), id, 2);
  p2 = files.commit_part(body(files, "bbbbb"), id, 2);  // a re-upload replaces the part
  auto p3 = files.commit_part(body(files, "cc"), id, 3);
  REQUIRE((p1 && p2 && p3));
  CHECK(files.parts(id).size() == 3);
  CHECK(files.parts(id)[1].second.size == 5);
  CHECK_FALSE(files.commit_part(body(files, "x"), "mpu_none", 1));

  object_info out;
  CHECK(files.complete_upload(id, {{1, p1->etag}, {2, "\"0000\""}, {3, p3->etag}}, 5, out) == complete_error::invalid_part);
  CHECK(files.complete_upload(id, {{2, p2->etag}, {1, p1->etag}}, 5, out) == complete_error::invalid_part_order);
  CHECK(files.complete_upload(id, {{1, p1->etag}, {2, p2->etag}, {3, p3->etag}}, 6, out)
        == complete_error::entity_too_small);
  CHECK_FALSE(files.stat("contentlake", "t/blb_2/1"));  // nothing visible after refusals

  REQUIRE(files.complete_upload(id, {{1, "\"" + p1->etag + "\""}, {2, p2->etag}, {3, p3->etag}}, 5, out)
          == complete_error::none);
  CHECK(out.size == 12);
  CHECK(out.sha256 == cl::domain::sigv4::sha256_hex("aaaaabbbbbcc"));
  CHECK(out.etag.size() == 34);
  CHECK(out.etag.substr(32) == "-3");
  CHECK(read_all(*files.data_path("contentlake", "t/blb_2/1")) == "aaaaabbbbbcc");
  CHECK_FALSE(files.upload(id));  // the upload is gone once completed
  CHECK(files.complete_upload(id, {{1, p1->etag}}, 5, out) == complete_error::no_such_upload);
}

TEST_CASE("an aborted upload releases its parts", "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  auto id = files.create_upload("contentlake", "t/blb_3/1", "image/png");
  files.commit_part(body(files, "part"), id, 1);
  CHECK(files.abort_upload(id));
  CHECK_FALSE(files.upload(id));
  CHECK(files.parts(id).empty());
  CHECK_FALSE(files.abort_upload(id));
  CHECK_FALSE(files.upload("../objects"));
  CHECK_FALSE(files.upload("mpu_../../tmp"));
  CHECK_FALSE(files.upload("mpu_"));
}

TEST_CASE("object keys: no empty, '.' or '..' segment, no control character", "[storage][objects]") {
  CHECK(object_files::valid_key("t_demo/blb_1/v 1~x.bin"));
  CHECK_FALSE(object_files::valid_key(""));
  CHECK_FALSE(object_files::valid_key("../etc/passwd"));
  CHECK_FALSE(object_files::valid_key("a/../b"));
  CHECK_FALSE(object_files::valid_key("a//b"));
  CHECK_FALSE(object_files::valid_key("/a"));
  CHECK_FALSE(object_files::valid_key("a/./b"));
  CHECK_FALSE(object_files::valid_key(std::string{"a\0b", 3}));
  CHECK_FALSE(object_files::valid_key(std::string(1025, 'k')));
}

namespace {

/// `n` bytes of a repeating, position-dependent pattern (a misplaced block shows).
std::string pattern(std::size_t n, unsigned seed) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 131 + seed * 7 + i / 4096) & 0xff);
  return out;
}

}  // namespace

TEST_CASE("bodies written direct in aligned blocks, a tail and a misaligned write after them, read back whole",
          "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  constexpr std::size_t block = object_files::direct_alignment;
  auto bytes = pattern(3 * (1 << 20) + 3 * block + 10, 1);
  // Aligned memory, as the listener's chunks: whole blocks go direct, the tail through the cache.
  auto* aligned = static_cast<char*>(std::aligned_alloc(block, bytes.size() + block));
  std::memcpy(aligned, bytes.data(), bytes.size());
  auto in = files.receive();
  in->append(std::string_view{aligned, 1 << 20});
  in->append(std::string_view{aligned + (1 << 20), 2 * (1 << 20) + 3 * block});
  in->append(std::string_view{aligned + 3 * (1 << 20) + 3 * block, 10});
  std::free(aligned);
  auto info = files.commit_object(std::move(in), "contentlake", "t/blb_5/1", "application/octet-stream");
  CHECK(info.size == bytes.size());
  CHECK(info.sha256 == cl::domain::sigv4::sha256_hex(bytes));
  CHECK(info.etag == info.sha256.substr(0, 32));  // the documented ETag
  CHECK(read_all(*files.data_path("contentlake", "t/blb_5/1")) == bytes);

  // Unaligned memory from the first write on: all of it through the page cache.
  auto odd = pattern(2 * (1 << 20) + 5, 2);
  auto info2 = files.commit_object(body(files, odd, 1 << 20), "contentlake", "t/blb_5/2", "text/plain");
  CHECK(info2.sha256 == cl::domain::sigv4::sha256_hex(odd));
  CHECK(read_all(*files.data_path("contentlake", "t/blb_5/2")) == odd);
}

// Whether a flush made the bytes durable cannot be seen short of a crash; what can is that the
// flushes between the writes lose or move nothing.
TEST_CASE("a body received with flushes as it goes, past two of them, reads back whole with its digest",
          "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  constexpr std::size_t chunk = 2 << 20;
  // Past two flushes, then a chunk's worth and a tail; random bytes, so a chunk written at another
  // chunk's offset shows (pattern() repeats every MiB).
  constexpr std::uint64_t flush_every = 8 << 20;
  const std::size_t n = 2 * flush_every + chunk + 100;
  std::string bytes(n, '\0');
  std::mt19937_64 rng{69};
  for (auto& c : bytes) c = static_cast<char>(rng());
  cl::storage::direct_buffer memory{chunk};  // as the listener's chunks
  auto in = files.receive(flush_every);
  for (std::size_t at = 0; at < n; at += chunk) {
    auto len = std::min(chunk, n - at);
    std::memcpy(memory.data(), bytes.data() + at, len);
    in->append(std::string_view{memory.data(), len});
  }
  auto info = files.commit_object(std::move(in), "contentlake", "t/blb_5/long", "application/octet-stream");
  CHECK(info.size == n);
  CHECK(info.sha256 == cl::domain::sigv4::sha256_hex(bytes));
  CHECK(read_all(*files.data_path("contentlake", "t/blb_5/long")) == bytes);
}

TEST_CASE("memory for direct writes starts on a huge page's boundary and holds whole huge pages",
          "[storage][objects]") {
  using cl::storage::direct_buffer;
  for (std::size_t asked : {std::size_t{1}, direct_buffer::page, direct_buffer::page + 1, 3 * direct_buffer::page}) {
    bool huge = asked != 1;  // a small body's chunk asks for 4 KiB pages: the same shape
    direct_buffer memory{asked, huge};
    CHECK(reinterpret_cast<std::uintptr_t>(memory.data()) % direct_buffer::page == 0);
    CHECK(memory.size() % direct_buffer::page == 0);
    CHECK(memory.size() >= asked);
    CHECK(memory.size() < asked + direct_buffer::page);
    std::memset(memory.data(), 0x5a, memory.size());  // all of it is writable
    CHECK(memory.data()[memory.size() - 1] == 0x5a);
  }
}

TEST_CASE("the MD5 is computed only from what is added to it", "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  auto in = files.receive();
  in->append("hello, tides");
  in->add_to_md5("hello, tides");
  CHECK(in->md5() == "325ae2d8601b0441514f0b88d53d473a");
  CHECK(in->sha256() == cl::domain::sigv4::sha256_hex("hello, tides"));
}

TEST_CASE("a multipart completion copies parts of any size across its buffers, in order", "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  auto id = files.create_upload("contentlake", "t/blb_6/1", "video/mp4");
  // Sizes that end the completion's 4 MiB buffers inside a part, and parts that end inside them.
  std::vector<std::string> parts{pattern(5 * (1 << 20) + 1, 3), pattern(3 * (1 << 20) + 4095, 4), pattern(123, 5)};
  std::vector<std::pair<int, std::string>> listed;
  for (int n = 1; n <= 3; ++n) {
    auto p = files.commit_part(body(files, parts[n - 1], 1 << 20), id, n);
    REQUIRE(p);
    listed.emplace_back(n, p->etag);
  }
  object_info out;
  auto whole = parts[0] + parts[1] + parts[2];
  CHECK(files.complete_upload(id, listed, 5, out, std::string(64, '0')) == complete_error::checksum_mismatch);
  CHECK_FALSE(files.stat("contentlake", "t/blb_6/1"));
  REQUIRE(files.complete_upload(id, listed, 5, out, cl::domain::sigv4::sha256_hex(whole)) == complete_error::none);
  CHECK(out.size == whole.size());
  CHECK(read_all(*files.data_path("contentlake", "t/blb_6/1")) == whole);
}

TEST_CASE("a replaced object is gone for readers at once and its bytes removed after", "[storage][objects]") {
  temp_dir dir;
  object_files files{dir.path + "/blobs"};
  files.commit_object(body(files, "first"), "contentlake", "t/blb_7/1", "text/plain");
  files.commit_object(body(files, "second"), "contentlake", "t/blb_7/1", "text/plain");
  CHECK(read_all(*files.data_path("contentlake", "t/blb_7/1")) == "second");
  CHECK_FALSE(std::filesystem::is_empty(dir.path + "/blobs/tmp"));  // set aside, not yet removed
  files.empty_trash();
  CHECK(std::filesystem::is_empty(dir.path + "/blobs/tmp"));
  files.commit_object(body(files, "third"), "contentlake", "t/blb_7/1", "text/plain");
  object_files reopened{dir.path + "/blobs"};  // what was never emptied goes when the store opens
  CHECK(std::filesystem::is_empty(dir.path + "/blobs/tmp"));
  CHECK(read_all(*reopened.data_path("contentlake", "t/blb_7/1")) == "third");
}
