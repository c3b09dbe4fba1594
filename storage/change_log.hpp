#pragma once
/// The change log: one typed entry per change a committed mutation made, in commit order, numbered
/// without gaps. Written in the same transaction as the change; read as a feed by consumers (the
/// search indexer, later webhooks and edge purge) that each keep their own position.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cl::storage {

/// What kind of record changed.
enum class change_kind : std::uint8_t {
  resource = 1,
  work = 2,
  contract = 3,
  blob = 4,  ///< a committed blob version (`created`)
  /// The platform policy (`policy_changed`): logged once with an empty tenant, for every tenant;
  /// its `id` and `version` are the new policy's version.
  policy = 5,
};

/// What happened to it.
enum class change_op : std::uint8_t {
  created = 1,      ///< a new record
  replaced = 2,     ///< PUT: the whole state replaced
  patched = 3,      ///< PATCH: a merge patch applied
  promoted = 4,     ///< a staged Resource attached to a Work
  snapshotted = 5,  ///< a version kept (POST .../versions)
  granted = 6,      ///< an access grant made or changed on the Resource
  revoked = 7,      ///< an access grant removed from the Resource
  contract_changed = 8,  ///< a new contract version (its terms, status or Works changed)
  policy_changed = 9,    ///< the platform policy in force changed (`policy`)
};

/// Stable names, for logs and JSON (`created`, `replaced`, ...).
std::string_view change_op_name(change_op op);
std::string_view change_kind_name(change_kind kind);

/// One entry of the log.
struct change_entry {
  std::uint64_t seq = 0;   ///< set by the log when appended: 1, 2, 3, ... without gaps
  std::string tenant;
  change_kind kind = change_kind::resource;
  std::string id;          ///< the record's id (`res_`, `wk_`, `ctr_`)
  change_op op = change_op::created;
  std::int64_t at_ms = 0;  ///< Unix milliseconds of the write
  std::string version;     ///< the record's version after the change, where it has one (a Resource's `ver_`)
  std::string hash;        ///< the record's `hash` (ETag) after the change, where the write answered one
  std::string principal;   ///< `granted` / `revoked`: the grantee
  /// The sequence of the first entry its mutation logged: the entries of one write share it (set
  /// by the log when appended; 0 in entries written before it was kept).
  std::uint64_t transaction = 0;

  friend bool operator==(const change_entry& a, const change_entry& b) {
    return a.seq == b.seq && a.tenant == b.tenant && a.kind == b.kind && a.id == b.id && a.op == b.op
           && a.at_ms == b.at_ms && a.version == b.version && a.hash == b.hash && a.principal == b.principal
           && a.transaction == b.transaction;
  }
};

/// The stored bytes of `e` (without its sequence, which is the key): a version byte, kind, op,
/// time, the transaction, then tenant, id, version, hash and principal, length-prefixed.
std::string encode_change(const change_entry& e);

/// The entry stored under `seq`, or nullopt when the bytes are not one. Entries of earlier
/// layouts (2: no version, hash, principal or transaction; 1: JSON `{"op","tenant","kind","id"}`) are read too.
std::optional<change_entry> decode_change(std::uint64_t seq, std::string_view bytes);

}  // namespace cl::storage
