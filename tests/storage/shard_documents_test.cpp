// What a search reads beside each shard of its index (storage/search/shard_documents.hpp): word sequences
// for phrase checks, hit records, and LMDB's snapshots of them.

#include "storage/search/shard_documents.hpp"

#include "tests/support/service_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
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

TEST_CASE("a pair sketch never turns away a pair the words hold, and turns most others away", "[search][documents]") {
  cl::testing::temp_dir dir;
  shard_documents store{dir.path + "/d"};
  std::mt19937 rng{14};
  std::vector<std::vector<std::uint32_t>> docs;
  for (std::uint32_t d = 1; d <= 50; ++d) {
    std::vector<std::uint32_t> words;
    for (int i = 0; i < 300; ++i) words.push_back(i == 150 ? 0 : word_hash("w" + std::to_string(rng() % 5000)));
    store.put(d, word_hash("en"), words, "r");
    docs.push_back(words);
  }
  store.commit();
  auto reader = store.read();
  std::size_t absent = 0, passed = 0;
  for (std::uint32_t d = 1; d <= 50; ++d) {
    const auto& words = docs[d - 1];
    auto sketch = reader.sketch(d);
    REQUIRE(sketch);
    CHECK(sketch->key == word_hash("en"));
    auto seq = reader.find(d);
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      if (words[i] == 0 || words[i + 1] == 0) continue;
      INFO("document " << d << " pair " << i);
      CHECK(sketch->may_hold(pair_bits::of({words[i], words[i + 1]})));
      if (i + 2 < words.size() && words[i + 2] != 0) CHECK(sketch->may_hold(pair_bits::of({words[i], words[i + 1], words[i + 2]})));
    }
    for (int k = 0; k < 200; ++k) {
      std::vector<std::uint32_t> pair{words[rng() % words.size()], word_hash("absent" + std::to_string(k))};
      if (pair[0] == 0 || seq->holds(pair)) continue;
      ++absent;
      if (sketch->may_hold(pair_bits::of(pair))) ++passed;
    }
  }
  // ~300 words set ~1 bit in 4 of 2,048: an absent pair passes about 1 time in 20.
  REQUIRE(absent > 9000);
  CHECK(passed * 10 < absent);
  CHECK(pair_bits::of({word_hash("one")}).bits.empty());  // one word: no pair to rule out
}

TEST_CASE("a batch's writes land in the order written, table by table", "[search][documents]") {
  cl::testing::temp_dir dir;
  shard_documents store{dir.path + "/d"};
  store.put(1, 7, {1, 2}, "one");
  store.erase(1);            // written, then removed, in one batch: gone
  store.erase(2);            // removed (there is nothing), then written: there
  store.put(2, 7, {3, 4}, "two");
  store.put(3, 7, {5, 6}, "three");
  store.put(3, 8, {6, 5}, "three again");  // the later write wins
  store.commit();
  auto reader = store.read();
  CHECK_FALSE(reader.find(1));
  CHECK_FALSE(reader.sketch(1));
  CHECK_FALSE(reader.record(1));
  CHECK(reader.record(2) == "two");
  CHECK(reader.sketch(2)->may_hold(pair_bits::of({3, 4})));
  CHECK(reader.record(3) == "three again");
  CHECK(reader.sketch(3)->key == 8);
  CHECK(reader.find(3)->key() == 8);
  CHECK(reader.sketch(3)->may_hold(pair_bits::of({6, 5})));
  CHECK(store.size() == 2);
}

TEST_CASE("sketches kept in blocks: each document's own, across blocks, after removals and rewrites",
          "[search][documents]") {
  cl::testing::temp_dir dir;
  shard_documents store{dir.path + "/d"};
  // Documents 1..300 (several blocks of 62), each with the pair (d, d + 1000) and its key d.
  auto words_of = [](std::uint32_t d) { return std::vector<std::uint32_t>{d, d + 1000}; };
  for (std::uint32_t d = 1; d <= 300; ++d) store.put(d, d, words_of(d), "r");
  store.commit();
  // A later batch: every document of the second block (62..123) removed, so the block is empty;
  // every fifth of the others removed; 100 written again with other words; 400 added alone.
  for (std::uint32_t d = 62; d <= 123; ++d) store.erase(d);
  for (std::uint32_t d = 5; d <= 300; d += 5)
    if (d < 62 || d > 123) store.erase(d);
  store.put(100, 7, {7, 8}, "again");
  store.put(400, 400, words_of(400), "r");
  store.commit();
  auto present = [](std::uint32_t d) {
    if (d == 100 || d == 400) return true;
    return d >= 1 && d <= 300 && (d < 62 || d > 123) && d % 5 != 0;
  };
  auto reader = store.read();
  shard_documents::reader::sketch_cache cache;
  std::mt19937 random{14};
  std::vector<std::uint32_t> order;
  for (std::uint32_t d = 0; d <= 500; ++d) order.push_back(d);
  auto orders = {order, [&] { auto o = order; std::shuffle(o.begin(), o.end(), random); return o; }()};
  for (const auto& o : orders)
    for (auto d : o) {
      INFO("document " << d);
      for (auto sketch : {reader.sketch(d), reader.sketch(d, &cache)}) {
        REQUIRE(static_cast<bool>(sketch) == present(d));
        if (!sketch) continue;
        if (d == 100) {
          CHECK(sketch->key == 7);
          CHECK(sketch->may_hold(pair_bits::of({7, 8})));
        } else {
          CHECK(sketch->key == d);
          CHECK(sketch->may_hold(pair_bits::of(words_of(d))));
        }
      }
    }
}
