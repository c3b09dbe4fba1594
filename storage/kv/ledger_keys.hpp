#pragma once
/// How the key-value backends store the idempotency ledger's keys (storage-private: ledger_store.cpp
/// and every_record.cpp). A key is `tenant\0client\0key`; LMDB takes keys of 511 bytes at most, and
/// the API admits 255 bytes for each of the three (identity claims, `Idempotency-Key`). A key longer
/// than `longest_plain_key` (511 less the expiry index's 8-byte prefix: every key LMDB could hold
/// before stays as it was) is stored under its SHA-256, after a 0xff byte (never the first byte of
/// UTF-8 text, so such keys sort after every plain one), and its value carries the three parts in
/// front of the record (each after a 2-byte big-endian length), so the key is read back whole
/// (migrate, backup) and checked on every read.

#include "domain/idempotency.hpp"
#include "domain/sha256.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cl::storage::kv_ledger {

inline constexpr std::size_t longest_plain_key = 511 - 8;
inline constexpr char hashed_mark = '\xff';

inline std::string plain_key(const domain::ledger_key& k) {
  std::string out{k.tenant};
  out.push_back('\0');
  out.append(k.client_id).push_back('\0');
  out.append(k.key);
  return out;
}

/// The key the record is stored under.
inline std::string stored_key(const domain::ledger_key& k) {
  auto plain = plain_key(k);
  if (plain.size() <= longest_plain_key) return plain;
  auto digest = domain::sha256(plain);
  std::string out(1, hashed_mark);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

inline bool hashed(std::string_view stored) { return !stored.empty() && stored.front() == hashed_mark; }

/// The value stored for `record` under `stored_key(k)`.
inline std::string stored_value(const domain::ledger_key& k, std::string_view record) {
  if (!hashed(stored_key(k))) return std::string{record};
  std::string out;
  for (const auto* part : {&k.tenant, &k.client_id, &k.key}) {
    out.push_back(static_cast<char>((part->size() >> 8) & 0xff));
    out.push_back(static_cast<char>(part->size() & 0xff));
    out.append(*part);
  }
  return out.append(record);
}

/// The key and the record of a stored (key, value); nullopt when a hashed value does not hold a
/// key (damaged).
struct stored_entry {
  domain::ledger_key key;
  std::string_view record;
};
inline std::optional<stored_entry> read_entry(std::string_view stored, std::string_view value) {
  stored_entry out;
  if (!hashed(stored)) {
    auto first = stored.find('\0');
    auto second = first == std::string_view::npos ? first : stored.find('\0', first + 1);
    if (second == std::string_view::npos) return std::nullopt;
    out.key = {std::string{stored.substr(0, first)}, std::string{stored.substr(first + 1, second - first - 1)},
               std::string{stored.substr(second + 1)}};
    out.record = value;
    return out;
  }
  std::string* parts[] = {&out.key.tenant, &out.key.client_id, &out.key.key};
  for (auto* part : parts) {
    if (value.size() < 2) return std::nullopt;
    auto n = (static_cast<std::size_t>(static_cast<unsigned char>(value[0])) << 8) | static_cast<unsigned char>(value[1]);
    if (value.size() < 2 + n) return std::nullopt;
    part->assign(value.substr(2, n));
    value.remove_prefix(2 + n);
  }
  out.record = value;
  return out;
}

}  // namespace cl::storage::kv_ledger
