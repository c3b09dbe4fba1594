#include "storage/shard_documents.hpp"

#include <lmdb.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

}  // namespace

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

struct shard_documents::impl {
  MDB_env* env = nullptr;
  MDB_dbi words = 0, records = 0;
  MDB_txn* writing = nullptr;
  ~impl() {
    if (writing) mdb_txn_abort(writing);
    if (env) mdb_env_close(env);
  }
  MDB_txn* txn() {
    if (!writing) check(mdb_txn_begin(env, nullptr, 0, &writing), "begin");
    return writing;
  }
};

shard_documents::shard_documents(const std::filesystem::path& dir) : impl_(std::make_unique<impl>()) {
  std::filesystem::create_directories(dir);
  check(mdb_env_create(&impl_->env), "create");
  check(mdb_env_set_mapsize(impl_->env, map_size), "map size");
  check(mdb_env_set_maxdbs(impl_->env, 2), "tables");
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
  auto k = key_of(docid);
  MDB_val v{4 * (words.size() + 1), nullptr};
  check(mdb_put(impl_->txn(), impl_->words, &k, &v, MDB_RESERVE), "put words");
  auto* out = static_cast<unsigned char*>(v.mv_data);
  std::memcpy(out, &key, 4);
  if (!words.empty()) std::memcpy(out + 4, words.data(), 4 * words.size());
  MDB_val r{record.size(), const_cast<char*>(record.data())};
  check(mdb_put(impl_->txn(), impl_->records, &k, &r, 0), "put record");
}

void shard_documents::erase(std::uint32_t docid) {
  for (auto dbi : {impl_->words, impl_->records}) {
    auto k = key_of(docid);
    int rc = mdb_del(impl_->txn(), dbi, &k, nullptr);
    if (rc != MDB_NOTFOUND) check(rc, "delete");
  }
}

void shard_documents::commit() {
  if (!impl_->writing) return;
  int rc = mdb_txn_commit(impl_->writing);  // frees the transaction whatever the result
  impl_->writing = nullptr;
  check(rc, "commit");
}

void shard_documents::abort() noexcept {
  if (impl_->writing) mdb_txn_abort(impl_->writing);
  impl_->writing = nullptr;
}

shard_documents::reader shard_documents::read() const {
  reader r;
  check(mdb_txn_begin(impl_->env, nullptr, MDB_RDONLY, &r.txn_), "begin");
  r.words_ = impl_->words;
  r.records_ = impl_->records;
  return r;
}

shard_documents::reader::reader(reader&& o) noexcept : txn_(o.txn_), words_(o.words_), records_(o.records_) {
  o.txn_ = nullptr;
}

shard_documents::reader& shard_documents::reader::operator=(reader&& o) noexcept {
  if (this != &o) {
    if (txn_) mdb_txn_abort(txn_);
    txn_ = o.txn_;
    words_ = o.words_;
    records_ = o.records_;
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
  auto k = key_of(docid);
  MDB_val v{};
  int rc = mdb_get(txn_, words_, &k, &v);
  if (rc == MDB_NOTFOUND) return std::nullopt;
  check(rc, "get");
  if (v.mv_size < 4 || v.mv_size % 4 != 0) return std::nullopt;
  return word_sequence{static_cast<const unsigned char*>(v.mv_data), v.mv_size / 4};
}

std::optional<std::string_view> shard_documents::reader::record(std::uint32_t docid) const {
  auto k = key_of(docid);
  MDB_val v{};
  int rc = mdb_get(txn_, records_, &k, &v);
  if (rc == MDB_NOTFOUND) return std::nullopt;
  check(rc, "get");
  return std::string_view{static_cast<const char*>(v.mv_data), v.mv_size};
}

}  // namespace cl::storage

