#pragma once
/// Each indexed document's words in order, for phrase and proximity checks without Xapian's
/// position lists (storage/search_index.hpp). Xapian 1.4 reads two 8 KB blocks through `pread`
/// for each position list it looks up: a phrase with a frequent word checked thousands of
/// candidates that way (10 ms and more at 100,000 documents), a query of two words 82 lists for
/// its proximity bonus. Here a document's words are one LMDB value read through the map, with no
/// copy and no system call.
///
/// One LMDB environment per shard, keyed by the shard's own Xapian document id: the hashes of the
/// document's stemmer key and of its terms in position order (`word_hash`; 0 where positions skip,
/// between title and text). Derived like the rest of the index: written in the batch that writes
/// the document, committed before the shard's Xapian commit (a document Xapian holds always has
/// its sequence; a crash in between leaves sequences of document ids the replayed batch writes
/// again), removed with it. A document without a sequence is checked by Xapian's positions.

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
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

class word_sequences {
public:
  /// Opens (creating) the store in directory `dir`; throws std::runtime_error.
  explicit word_sequences(const std::filesystem::path& dir);
  ~word_sequences();
  word_sequences(const word_sequences&) = delete;
  word_sequences& operator=(const word_sequences&) = delete;

  /// How many documents have a sequence (committed).
  std::size_t size() const;

  /// Writes (one writer at a time; kept in a transaction until `commit`).
  void put(std::uint32_t docid, std::uint32_t key, const std::vector<std::uint32_t>& words);
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
    /// The first document from `docid` on that has a sequence (its id).
    std::optional<std::pair<std::uint32_t, word_sequence>> first_from(std::uint32_t docid) const;
    /// Ends the snapshot (LMDB keeps no old pages for it), and begins a fresh one.
    void release() noexcept;
    void renew();
    explicit operator bool() const { return txn_ != nullptr; }

  private:
    friend class word_sequences;
    MDB_txn* txn_ = nullptr;
    unsigned dbi_ = 0;
  };
  reader read() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cl::storage
