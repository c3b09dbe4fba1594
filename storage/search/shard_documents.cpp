#include "storage/search/shard_documents.hpp"

#include <lmdb.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <map>
#include <stdexcept>
#include <string>

namespace cl::storage {

namespace {

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS) throw std::runtime_error(std::string{"word sequences: "} + what + ": " + mdb_strerror(rc));
}

MDB_val key_of(const std::uint32_t& docid) {
  return MDB_val{sizeof docid, const_cast<std::uint32_t*>(&docid)};
}

/// The map's size: address space only (the file grows with what it holds): ~4 KB a document of
/// 2 KB of text, 64 GiB hold millions.
constexpr std::size_t map_size = std::size_t{64} << 30;

/// The entry under `key` (a document id, or a block number) in table `dbi`, if there is one (valid
/// while `txn` lives).
std::optional<MDB_val> entry(MDB_txn* txn, unsigned dbi, std::uint32_t key) {
  auto k = key_of(key);
  MDB_val v{};
  int rc = mdb_get(txn, dbi, &k, &v);
  if (rc == MDB_NOTFOUND) return std::nullopt;
  check(rc, "get");
  return v;
}

/// The bit of a pair `a`, `b` for probe `i` (0 or 1): a 64-bit multiplicative mix of the two.
std::uint16_t pair_bit(std::uint32_t a, std::uint32_t b, int i) {
  std::uint64_t x = ((static_cast<std::uint64_t>(a) << 32) | b) * 0x9E3779B97F4A7C15ull;
  auto h = static_cast<std::uint32_t>(x >> 32) ^ static_cast<std::uint32_t>(x);
  if (i == 1) h = (h * 0x85EBCA6Bu) >> 7;
  return static_cast<std::uint16_t>(h % (pair_sketch::bytes * 8));
}

}  // namespace

pair_bits pair_bits::of(const std::vector<std::uint32_t>& words) {
  pair_bits out;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == 0 || words[i + 1] == 0) continue;  // a gap stands between no two words
    for (int probe = 0; probe < 2; ++probe) out.bits.push_back(pair_bit(words[i], words[i + 1], probe));
  }
  return out;
}

std::uint32_t word_hash(std::string_view term) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : term) h = (h ^ c) * 16777619u;
  return h == 0 ? 1 : h;
}

bool word_sequence::holds(const std::vector<std::uint32_t>& words) const {
  if (words.empty()) return true;
  if (count < 1 + words.size()) return false;
  const std::size_t n = count - 1;  // the words, after the key
  const unsigned char* text = bytes + 4;
  auto word = [text](std::size_t i) {
    std::uint32_t v;
    std::memcpy(&v, text + 4 * i, 4);
    return v;
  };
  auto from = [&](std::size_t i) {  // whether the phrase stands from word i on (word i is its first)
    if (i + words.size() > n) return false;
    for (std::size_t k = 1; k < words.size(); ++k)
      if (word(i + k) != words[k]) return false;
    return true;
  };
  std::size_t i = 0;
#if defined(__SSE2__)
  // Four words a compare: this scan is most of a phrase check's cost.
  const __m128i first = _mm_set1_epi32(static_cast<int>(words[0]));
  for (; i + 4 <= n; i += 4) {
    auto v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text + 4 * i));
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi32(v, first)));
    while (mask != 0) {
      auto lane = static_cast<std::size_t>(__builtin_ctz(mask)) / 4;
      if (from(i + lane)) return true;
      mask &= ~(0xFu << (4 * lane));
    }
  }
#endif
  for (; i < n; ++i)
    if (word(i) == words[0] && from(i)) return true;
  return false;
}

/// A write waiting for `commit`: a document's entries, or their removal.
struct shard_documents_op {
  std::uint32_t docid = 0;
  bool erase = false;
  std::uint32_t key = 0;
  std::vector<std::uint32_t> words;
  std::string record;
};

struct shard_documents::impl {
  MDB_env* env = nullptr;
  MDB_dbi words = 0, records = 0, sketches = 0;
  std::vector<shard_documents_op> staged;  ///< in the order written
  ~impl() {
    if (env) mdb_env_close(env);
  }
};

shard_documents::shard_documents(const std::filesystem::path& dir) : impl_(std::make_unique<impl>()) {
  std::filesystem::create_directories(dir);
  check(mdb_env_create(&impl_->env), "create");
  check(mdb_env_set_mapsize(impl_->env, map_size), "map size");
  check(mdb_env_set_maxdbs(impl_->env, 3), "tables");
  // MDB_NOTLS: a reader lives in a pool and serves searches on any thread. MDB_NORDAHEAD: reads
  // are single pages at random.
  int rc = mdb_env_open(impl_->env, dir.c_str(), MDB_NOTLS | MDB_NORDAHEAD, 0640);
  if (rc != MDB_SUCCESS) {
    mdb_env_close(impl_->env);
    impl_->env = nullptr;
    check(rc, ("open " + dir.string()).c_str());
  }
  MDB_txn* txn = nullptr;
  check(mdb_txn_begin(impl_->env, nullptr, 0, &txn), "begin");
  rc = mdb_dbi_open(txn, "words", MDB_INTEGERKEY | MDB_CREATE, &impl_->words);
  if (rc == MDB_SUCCESS) rc = mdb_dbi_open(txn, "records", MDB_INTEGERKEY | MDB_CREATE, &impl_->records);
  if (rc == MDB_SUCCESS) rc = mdb_dbi_open(txn, "sketches", MDB_INTEGERKEY | MDB_CREATE, &impl_->sketches);
  if (rc != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    check(rc, "open database");
  }
  check(mdb_txn_commit(txn), "commit");
}

shard_documents::~shard_documents() = default;

std::size_t shard_documents::size() const {
  MDB_txn* txn = nullptr;
  check(mdb_txn_begin(impl_->env, nullptr, MDB_RDONLY, &txn), "begin");
  MDB_stat st{};
  int rc = mdb_stat(txn, impl_->words, &st);
  mdb_txn_abort(txn);
  check(rc, "stat");
  return st.ms_entries;
}

void shard_documents::put(std::uint32_t docid, std::uint32_t key, const std::vector<std::uint32_t>& words,
                          std::string_view record) {
  impl_->staged.push_back({docid, false, key, words, std::string{record}});
}

void shard_documents::erase(std::uint32_t docid) {
  impl_->staged.push_back({docid, true, 0, {}, {}});
}

namespace {

/// Sketches are kept `sketch_slots` documents to a block (keyed by docid / sketch_slots): a
/// presence mask (64 bits), then each slot's stemmer key hash and filter. A search's candidates
/// come in document order, so most share the block of the one before and skip LMDB's walk from
/// the root (0.45 us of a ~0.6 us check, looked up one by one). 62 slots fill four 4 KiB pages
/// of LMDB's overflow (16 bytes of header): 16,128 bytes a block, 260 a document.
constexpr std::size_t sketch_slot = 4 + pair_sketch::bytes;
constexpr std::size_t sketch_slots = (4 * 4096 - 16 - 8) / sketch_slot;
constexpr std::size_t sketch_block_bytes = 8 + sketch_slots * sketch_slot;
static_assert(sketch_slots == 62 && sketch_slots <= 64);

std::uint64_t presence_of(const unsigned char* block) {
  std::uint64_t mask;
  std::memcpy(&mask, block, 8);
  return mask;
}

/// Where slot `slot` of `block` begins: its key hash, then its filter.
template <class Byte>
Byte* slot_of(Byte* block, std::size_t slot) {
  return block + 8 + slot * sketch_slot;
}

/// The batch's sketches (`staged`, in the order written) into their blocks: each block it touches
/// read once, changed in memory, written once (or removed when it holds none), in block order.
void write_sketches(MDB_txn* txn, MDB_dbi dbi, const std::vector<shard_documents_op>& staged) {
  std::map<std::uint32_t, std::vector<unsigned char>> blocks;
  for (const auto& op : staged) {
    auto [at, fresh] = blocks.try_emplace(static_cast<std::uint32_t>(op.docid / sketch_slots));
    auto& block = at->second;
    if (fresh) {
      auto v = entry(txn, dbi, at->first);
      if (v && v->mv_size == sketch_block_bytes) {
        auto* bytes = static_cast<const unsigned char*>(v->mv_data);
        block.assign(bytes, bytes + sketch_block_bytes);
      } else {
        block.assign(sketch_block_bytes, 0);
      }
    }
    auto slot = op.docid % sketch_slots;
    auto mask = presence_of(block.data());
    auto* out = slot_of(block.data(), slot);
    if (op.erase) {
      mask &= ~(std::uint64_t{1} << slot);
    } else {
      mask |= std::uint64_t{1} << slot;
      std::memcpy(out, &op.key, 4);
      std::memset(out + 4, 0, pair_sketch::bytes);
      for (auto bit : pair_bits::of(op.words).bits) out[4 + (bit >> 3)] |= static_cast<unsigned char>(1u << (bit & 7));
    }
    std::memcpy(block.data(), &mask, 8);
  }
  for (auto& [number, block] : blocks) {
    auto k = key_of(number);
    if (presence_of(block.data()) == 0) {
      int rc = mdb_del(txn, dbi, &k, nullptr);
      if (rc != MDB_NOTFOUND) check(rc, "delete sketches");
      continue;
    }
    MDB_val v{block.size(), block.data()};
    check(mdb_put(txn, dbi, &k, &v, 0), "put sketches");
  }
}

/// The tables, in the order a commit writes them.
enum class table { words, records };  // after the sketches (write_sketches)

/// Writes `op`'s entry of table `t` (LMDB's `dbi`) in `txn`.
void write_entry(MDB_txn* txn, MDB_dbi dbi, table t, const shard_documents_op& op) {
  auto k = key_of(op.docid);
  if (op.erase) {
    int rc = mdb_del(txn, dbi, &k, nullptr);
    if (rc != MDB_NOTFOUND) check(rc, "delete");
    return;
  }
  if (t == table::records) {
    MDB_val r{op.record.size(), const_cast<char*>(op.record.data())};
    check(mdb_put(txn, dbi, &k, &r, 0), "put record");
    return;
  }
  // The stemmer key's hash, then the words.
  MDB_val v{4 * (op.words.size() + 1), nullptr};
  check(mdb_put(txn, dbi, &k, &v, MDB_RESERVE), "put words");
  auto* out = static_cast<unsigned char*>(v.mv_data);
  std::memcpy(out, &op.key, 4);
  if (!op.words.empty()) std::memcpy(out + 4, op.words.data(), 4 * op.words.size());
}

}  // namespace

void shard_documents::commit() {
  if (impl_->staged.empty()) return;
  auto staged = std::move(impl_->staged);
  impl_->staged.clear();
  MDB_txn* txn = nullptr;
  check(mdb_txn_begin(impl_->env, nullptr, 0, &txn), "begin");
  try {
    // One table after the other (the sketches by block, the others in the order written): a
    // table's new pages lie next to each other in the file (LMDB hands a transaction's new pages
    // out in the order it asks), where a document's entries at a time would spread every table
    // over the records' pages (a word-sequence lookup took nearly twice as long that way).
    write_sketches(txn, impl_->sketches, staged);
    for (auto [t, dbi] : {std::pair{table::words, impl_->words}, std::pair{table::records, impl_->records}})
      for (const auto& op : staged) write_entry(txn, dbi, t, op);
  } catch (...) {
    mdb_txn_abort(txn);
    throw;
  }
  check(mdb_txn_commit(txn), "commit");  // frees the transaction whatever the result
}

void shard_documents::abort() noexcept {
  impl_->staged.clear();
}

shard_documents::reader shard_documents::read() const {
  reader r;
  check(mdb_txn_begin(impl_->env, nullptr, MDB_RDONLY, &r.txn_), "begin");
  r.words_ = impl_->words;
  r.records_ = impl_->records;
  r.sketches_ = impl_->sketches;
  return r;
}

shard_documents::reader::reader(reader&& o) noexcept
    : txn_(o.txn_), words_(o.words_), records_(o.records_), sketches_(o.sketches_) {
  o.txn_ = nullptr;
}

shard_documents::reader& shard_documents::reader::operator=(reader&& o) noexcept {
  if (this != &o) {
    if (txn_) mdb_txn_abort(txn_);
    txn_ = o.txn_;
    words_ = o.words_;
    records_ = o.records_;
    sketches_ = o.sketches_;
    o.txn_ = nullptr;
  }
  return *this;
}

shard_documents::reader::~reader() {
  if (txn_) mdb_txn_abort(txn_);
}

void shard_documents::reader::release() noexcept {
  if (txn_) mdb_txn_reset(txn_);
}

void shard_documents::reader::renew() {
  check(mdb_txn_renew(txn_), "renew");
}

std::optional<word_sequence> shard_documents::reader::find(std::uint32_t docid) const {
  auto v = entry(txn_, words_, docid);
  if (!v || v->mv_size < 4 || v->mv_size % 4 != 0) return std::nullopt;
  return word_sequence{static_cast<const unsigned char*>(v->mv_data), v->mv_size / 4};
}

std::optional<pair_sketch> shard_documents::reader::sketch(std::uint32_t docid, sketch_cache* cache) const {
  auto number = static_cast<std::uint32_t>(docid / sketch_slots);
  const unsigned char* block = nullptr;
  if (cache && cache->block == number) {
    block = cache->bytes;
  } else {
    auto v = entry(txn_, sketches_, number);
    if (v && v->mv_size == sketch_block_bytes) block = static_cast<const unsigned char*>(v->mv_data);
    if (cache) *cache = sketch_cache{number, block};
  }
  auto slot = docid % sketch_slots;
  if (!block || !((presence_of(block) >> slot) & 1)) return std::nullopt;
  pair_sketch out;
  std::memcpy(&out.key, slot_of(block, slot), 4);
  out.filter = slot_of(block, slot) + 4;
  return out;
}

std::optional<std::string_view> shard_documents::reader::record(std::uint32_t docid) const {
  auto v = entry(txn_, records_, docid);
  if (!v) return std::nullopt;
  return std::string_view{static_cast<const char*>(v->mv_data), v->mv_size};
}

}  // namespace cl::storage

