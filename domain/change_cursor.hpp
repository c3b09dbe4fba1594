#pragma once
/// Cursors and event ids of the change feed (issue 29): a position in the change log, bound to the
/// tenant and the filter it was issued for, and sealed (AES-256-GCM under a key derived from the
/// data dir's secret). The change log's sequence is global: a readable cursor or event id would tell
/// a tenant how much every other tenant writes, so neither shows it. An event id is a keyed hash of
/// (tenant, sequence): stable across polls, streams and webhook retries, unique, opaque.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl::domain {

/// Where a feed resumes: after sequence `after`, for `tenant` and the filter `binding` names
/// (the format version and the sorted types: `feed_binding`).
struct feed_position {
  std::string tenant;
  std::string binding;
  std::uint64_t after = 0;
  /// Inside the entry after `after`, where its events stopped (one entry can name many Resources:
  /// a contract change); empty when that entry has not been started.
  std::string within = {};
};

/// The binding of a feed cursor issued for event `types` (empty: all): the cursor layout and the
/// sorted, distinct types.
std::string feed_binding(std::vector<std::string> types);

/// The binding of a cursor that opens for any `types`: the `changes_cursor` a list answers.
std::string feed_binding_any();

/// Why a cursor does not open.
enum class cursor_problem {
  malformed,  ///< not a cursor this service sealed (or tampered with, or sealed under another secret)
  mismatch,   ///< another tenant's, or issued for another filter
  restored,   ///< issued before the data dir was restored from a backup (another log epoch)
  foreign,    ///< issued by another deployment (the same secrets, another database)
};

class feed_cursor_codec {
public:
  /// `secret`: at least 32 random bytes (the data dir's page token secret serves). `epoch`: the
  /// change log's epoch, new at every restore from a backup (empty for a data dir never restored):
  /// a cursor of another epoch does not open (`restored`), and event ids differ between epochs, so
  /// a sequence number given out again after a restore never repeats an id.
  /// `deployment`: the identity of the database the positions count in (`record_store::
  /// deployment_id`): a cursor sealed for another (a deployment with the same secrets) does not open
  /// (`foreign`). Empty: cursors name none (tests of the codec alone).
  explicit feed_cursor_codec(std::string_view secret, std::string epoch = {}, std::string deployment = {});

  /// A cursor for `p`: URL-safe, different at every call (a random nonce), opens to `p.after`.
  std::string seal(const feed_position& p) const;

  /// The position a cursor holds, when it was sealed for `tenant` and `binding` (and its `within`
  /// into `*within`).
  std::optional<std::uint64_t> open(std::string_view cursor, std::string_view tenant, std::string_view binding,
                                    cursor_problem* why = nullptr, std::string* within = nullptr) const;

  /// The position any cursor of `tenant` holds, whatever filter it was issued for: a write's
  /// `Content-Lake-Position`, a list's `changes_cursor` and a feed's `next_cursor` all name a point
  /// of the log to read at or past.
  std::optional<std::uint64_t> open_position(std::string_view cursor, std::string_view tenant,
                                             cursor_problem* why = nullptr) const;

  /// The id of the event at `seq` of `tenant`: `evt_` and 24 hex digits of a keyed hash.
  std::string event_id(std::string_view tenant, std::uint64_t seq) const;

  /// The id of one of the events of the entry at `seq` (a contract change's per Resource).
  std::string event_id(std::string_view tenant, std::uint64_t seq, std::string_view part) const;

private:
  /// `open`; any binding when `binding` is null.
  std::optional<std::uint64_t> open_bound(std::string_view cursor, std::string_view tenant,
                                          const std::string_view* binding, cursor_problem* why,
                                          std::string* within) const;

  std::string seal_key_;
  std::string id_key_;
  std::string epoch_;
  std::string deployment_;
};

}  // namespace cl::domain
