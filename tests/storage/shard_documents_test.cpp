// What a search reads beside each shard of its index (storage/shard_documents.hpp): word sequences
// for phrase checks, hit records, and LMDB's snapshots of them.

#include "storage/shard_documents.hpp"

#include "tests/support/service_fixture.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace cl::storage;

namespace {

std::vector<std::uint32_t> hashes(const std::vector<std::string>& words) {
  std::vector<std::uint32_t> out;
  for (const auto& w : words) out.push_back(w.empty() ? 0 : word_hash(w));
  return out;
}

}  // namespace

TEST_CASE("a word sequence holds a phrase only where its words stand together, in order", "[search][documents]") {
  cl::testing::temp_dir dir;
  shard_documents store{dir.path + "/d"};
  // Every start from 0 to 10 words in (the scan compares four words at a time, then the rest).
  for (std::uint32_t at = 0; at <= 10; ++at) {
    std::vector<std::string> words(at, "Zfill");
    words.insert(words.end(), {"Zspring", "Ztide"});
    store.put(at + 1, word_hash("en"), hashes(words), "record " + std::to_string(at));
  }
  // Title and text: a gap (0) between a title ending in `spring` and a text starting with `tide`.
  store.put(20, word_hash("en"), hashes({"ZSnote", "ZSspring", "", "Zspring", "", "Ztide", "Zspring"}), "gap");
  store.commit();
  auto reader = store.read();
  for (std::uint32_t at = 0; at <= 10; ++at) {
    INFO(at);
    auto seq = reader.find(at + 1);
    REQUIRE(seq);
    CHECK(seq->key() == word_hash("en"));
    CHECK(seq->holds(hashes({"Zspring", "Ztide"})));
    CHECK_FALSE(seq->holds(hashes({"Ztide", "Zspring"})));
    CHECK(seq->holds(hashes({"Ztide"})));
    CHECK_FALSE(seq->holds(hashes({"Zspring", "Ztide", "Zfill"})));  // the phrase runs past the end
    CHECK(seq->holds(hashes({"Zfill", "Zspring", "Ztide"})) == (at > 0));
    CHECK(reader.record(at + 1) == "record " + std::to_string(at));
  }
  auto gap = reader.find(20);
  REQUIRE(gap);
  CHECK_FALSE(gap->holds(hashes({"Zspring", "Ztide"})));
  CHECK_FALSE(gap->holds(hashes({"ZSspring", "Zspring"})));
  CHECK(gap->holds(hashes({"ZSnote", "ZSspring"})));
  CHECK_FALSE(reader.find(99));
  CHECK_FALSE(reader.record(99));
  CHECK(store.size() == 12);
}

TEST_CASE("a reader sees what was committed when it began or was renewed, and nothing aborted", "[search][documents]") {
  cl::testing::temp_dir dir;
  shard_documents store{dir.path + "/d"};
  store.put(1, 7, {1, 2, 3}, "first");
  store.commit();
  auto reader = store.read();
  store.put(1, 7, {4, 5}, "replaced");
  store.put(2, 7, {6}, "added");
  store.commit();
  CHECK(reader.record(1) == "first");  // its snapshot
  CHECK_FALSE(reader.record(2));
  reader.release();
  reader.renew();
  CHECK(reader.record(1) == "replaced");
  CHECK(reader.find(1)->count == 3);  // the key and two words
  CHECK(reader.record(2) == "added");
  store.erase(2);
  store.put(3, 7, {}, "never");
  store.abort();
  store.erase(1);
  store.commit();
  reader.release();
  reader.renew();
  CHECK_FALSE(reader.record(1));
  CHECK_FALSE(reader.find(1));
  CHECK(reader.record(2) == "added");
  CHECK_FALSE(reader.record(3));
  store.commit();  // nothing written: nothing to do
  CHECK(store.size() == 1);
}
