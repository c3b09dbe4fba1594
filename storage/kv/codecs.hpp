#pragma once
/// How the key-value stores encode records: a small typed header beside the canonical JSON, so a
/// list filters and a write checks without parsing JSON. The LMDB format migrations
/// (storage/kv/lmdb_store.cpp) and the stores' tests use them too.

#include "storage/content_stores.hpp"
#include "storage/contract_store.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::storage {

/// Storage-internal encodings of the typed headers (the LMDB value: header, then the JSON).
std::string encode_resource(const resource_header& h, std::string_view json);
std::string encode_activity(const activity_header& h, std::string_view json);
/// The header and JSON of a stored value; nullopt when it is not one (a format-3 value).
std::optional<std::pair<resource_header, std::string_view>> decode_resource(std::string_view value);
std::optional<std::pair<activity_header, std::string_view>> decode_activity(std::string_view value);
/// The `contract_works` keys that record the usage terms `record` (a contract version) names for
/// `usages_named`; the migration to format 5 writes them for versions stored before.
std::vector<std::string> usage_named_keys(std::string_view tenant, std::string_view record);

/// The stored bytes of a contract version: header (status, Works) then the canonical JSON.
std::string encode_contract(std::string_view status, const std::vector<std::string>& works, std::string_view record);

/// A stored contract version, decoded. Bytes written before the header existed (format 1, bare
/// JSON) are read by parsing the record.
struct stored_contract {
  std::string status;
  std::vector<std::string> works;
  std::string record;
};
std::optional<stored_contract> decode_contract(std::string_view bytes);

}  // namespace cl::storage
