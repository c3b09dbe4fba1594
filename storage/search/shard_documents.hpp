#pragma once
/// What a search reads of each indexed document besides Xapian's lists, kept beside each shard
/// (storage/search/index.hpp) in LMDB and read through its map, with no copy and no system call.
/// Xapian 1.4 reads 8 KB blocks through `pread`: two for every position list it looks up (a
/// query of two words looked up 82 for its proximity bonus, a phrase with a frequent word one per
/// candidate it checked) and some for every hit's value (a page's records were an eighth of a
/// search's CPU under load).
///
/// One LMDB environment per shard, keyed by the shard's own Xapian document id, three tables:
/// `words`, the hashes of the document's stemmer key and of its terms in position order
/// (`word_hash`; 0 where positions skip, between title and text), for phrase and proximity
/// checks; `sketches`, the stemmer key's hash and a Bloom filter of the document's neighbouring
/// words (`pair_sketch`), which turns most candidates of a phrase away before their words are
/// read, kept 62 documents to a block (keyed by docid / 62); `records`, what a hit shows. Derived
/// like the rest of the index: written in the batch that writes the document, committed before
/// the shard's Xapian commit (a document Xapian holds always has all three; a crash in between
/// leaves entries of document ids the replayed batch writes again), removed with it. A reader may see a document's entries ahead of its Xapian revision:
/// newer words and record for a replaced one (the newer is shown), none for a removed one (not
/// shown; its phrases are checked by Xapian's positions).

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

struct MDB_txn;

namespace cl::storage {

/// The 32-bit hash a word sequence holds for `term` (FNV-1a; never 0, which marks a gap).
std::uint32_t word_hash(std::string_view term);

/// A stored sequence, valid while the reader that found it lives: element 0 is the stemmer key's
/// hash, then the words. Unaligned (LMDB aligns values to 2 bytes): read through `at`.
struct word_sequence {
  const unsigned char* bytes = nullptr;
  std::size_t count = 0;  ///< hashes, the key's included
  std::uint32_t at(std::size_t i) const {
    std::uint32_t v;
    std::memcpy(&v, bytes + 4 * i, 4);
    return v;
  }
  std::uint32_t key() const { return at(0); }
  /// Whether `words` (hashes) stand in this order, next to each other, somewhere in the text.
  bool holds(const std::vector<std::uint32_t>& words) const;
};

/// Which bits of a `pair_sketch` the pairs of neighbouring words of a run of words set: a run
/// may stand in a document only if its sketch has all of them.
struct pair_bits {
  std::vector<std::uint16_t> bits;
  /// The bits of every two neighbours of `words` (hashes; a run of one word sets none, nor does a
  /// pair across a gap, 0).
  static pair_bits of(const std::vector<std::uint32_t>& words);
};

/// A document's Bloom filter of its pairs of neighbouring words: 2,048 bits, two a pair. A
/// document of ~300 words (2 KB of text) sets ~1 in 4; a pair it does not hold passes ~1 time in
/// 25, and then its words are read (`word_sequence::holds`). Read in ~0.2 us where the words take
/// ~0.9 (lookup and scan), from a table of 260 bytes a document (26 MB at 100,000) that stays in
/// the processor's cache where the words' 260 MB do not.
struct pair_sketch {
  static constexpr std::size_t bytes = 256;
  const unsigned char* filter = nullptr;  ///< `bytes` of them, valid while the reader lives
  std::uint32_t key = 0;                  ///< the stemmer key's hash, as word_sequence::key()
  /// Whether the words that set `b` may stand next to each other in the document (false: never).
  bool may_hold(const pair_bits& b) const {
    for (auto bit : b.bits)
      if (!((filter[bit >> 3] >> (bit & 7)) & 1)) return false;
    return true;
  }
};

class shard_documents {
public:
  /// Opens (creating) the store in directory `dir`; throws std::runtime_error.
  explicit shard_documents(const std::filesystem::path& dir);
  ~shard_documents();
  shard_documents(const shard_documents&) = delete;
  shard_documents& operator=(const shard_documents&) = delete;

  /// How many documents have a sequence (committed).
  std::size_t size() const;

  /// Writes (one writer at a time), held in memory until `commit` writes them in one transaction.
  void put(std::uint32_t docid, std::uint32_t key, const std::vector<std::uint32_t>& words, std::string_view record);
  void erase(std::uint32_t docid);
  /// Makes what was written durable (nothing to do when nothing was); `abort` drops it.
  void commit();
  void abort() noexcept;

  /// A read transaction: what was committed when it began (or was renewed).
  class reader {
  public:
    reader() = default;
    reader(reader&&) noexcept;
    reader& operator=(reader&&) noexcept;
    ~reader();
    std::optional<word_sequence> find(std::uint32_t docid) const;
    /// Where `sketch` found the last block of sketches it read (their bytes, valid while the reader
    /// lives and is not renewed). One per search and shard: its candidates come in document order
    /// and most share their block with the one before.
    struct sketch_cache {
      std::uint32_t block = ~std::uint32_t{0};
      const unsigned char* bytes = nullptr;
    };
    /// The document's sketch (none for a document written without one: check its words); through
    /// `cache` when given.
    std::optional<pair_sketch> sketch(std::uint32_t docid, sketch_cache* cache = nullptr) const;
    /// What a hit on the document shows (as `put`), valid while this reader lives.
    std::optional<std::string_view> record(std::uint32_t docid) const;
    /// Ends the snapshot (LMDB keeps no old pages for it), and begins a fresh one.
    void release() noexcept;
    void renew();
    explicit operator bool() const { return txn_ != nullptr; }

  private:
    friend class shard_documents;
    MDB_txn* txn_ = nullptr;
    unsigned words_ = 0, records_ = 0, sketches_ = 0;
  };
  reader read() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cl::storage
