#pragma once
/// Every record of every kind, in key order, a page at a time: what `contentlake migrate` copies
/// from one backend to another and counts on both sides (storage/migrate.hpp). A store of its own
/// (registered like a group's), so the core's store interfaces and the request path do not carry
/// it. Its writes add what no typed store writes: a change-log entry with its own sequence number.

#include "domain/idempotency.hpp"
#include "storage/blob_store.hpp"
#include "storage/change_log.hpp"
#include "storage/content_stores.hpp"
#include "storage/grant_store.hpp"
#include "storage/typed_store.hpp"
#include "storage/webhook_store.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace cl::storage {

class every_record_writes;

class every_record_reads : public typed_store {
public:
  using writes = every_record_writes;
  /// Up to `limit` Activities (tenant, id) after `after` (both empty: from the start).
  virtual std::vector<resource_position> activities(const resource_position& after, std::size_t limit) const = 0;
  /// Up to `limit` catalogue records of `kind` (tenant, id) after `after`.
  virtual std::vector<resource_position> catalog(catalog_kind kind, const resource_position& after,
                                                 std::size_t limit) const = 0;
  /// Up to `limit` contracts (tenant, id) after `after`.
  virtual std::vector<resource_position> contracts(const resource_position& after, std::size_t limit) const = 0;
  /// Up to `limit` grants after `after` (all empty: from the start).
  virtual std::vector<grant_ref> grants(const grant_ref& after, std::size_t limit) const = 0;
  /// Up to `limit` idempotency records' keys after `after`.
  virtual std::vector<domain::ledger_key> ledger(const domain::ledger_key& after, std::size_t limit) const = 0;
  /// Up to `limit` uploads (every state) after (tenant, id) `after`.
  virtual std::vector<upload_record> uploads(const resource_position& after, std::size_t limit) const = 0;
  /// Up to `limit` blob versions after (tenant, blob_id, version) of `after` (version 0, ids empty:
  /// from the start).
  virtual std::vector<blob_version> blob_versions(const blob_version& after, std::size_t limit) const = 0;
  /// Up to `limit` webhook endpoints, enabled or not, after (tenant, id) `after`.
  virtual std::vector<webhook_record> webhooks(const resource_position& after, std::size_t limit) const = 0;
};

class every_record_writes : public every_record_reads {
public:
  /// Appends `e` with its own sequence and transaction (above every entry the log holds): a log
  /// copied this way keeps its numbers, so cursors and consumers' positions keep their meaning.
  virtual void import_change(const change_entry& e) = 0;
};

inline const every_record_reads& every_record(const read_view& view) { return view.store<every_record_reads>(); }
inline every_record_writes& every_record(write_txn& tx) { return tx.store<every_record_writes>(); }

}  // namespace cl::storage
