#pragma once
/// Idempotency keys (spec 3.3, 4.6): the key's shape, the fingerprint of a request, and the
/// stored answer a retry replays byte for byte. The ledger itself lives in LMDB (actors/ledger).

#include "domain/exchange.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace cl::domain {

/// The header that marks a replayed answer (as Stripe's).
inline constexpr const char* replay_header = "Idempotent-Replayed";

/// Which request an idempotency record answers: a key is scoped to the tenant and the client that
/// sent it (spec 4.6). The store decides how it is laid out.
struct ledger_key {
  std::string tenant;
  std::string client_id;
  std::string key;
  friend bool operator<(const ledger_key& a, const ledger_key& b) {
    return std::tie(a.tenant, a.client_id, a.key) < std::tie(b.tenant, b.client_id, b.key);
  }
  friend bool operator==(const ledger_key& a, const ledger_key& b) {
    return a.tenant == b.tenant && a.client_id == b.client_id && a.key == b.key;
  }
};

/// Empty when `key` is usable: 1 to 255 characters of visible ASCII (0x21-0x7E); otherwise why not.
std::optional<std::string> idempotency_key_problem(std::string_view key);

/// What makes two requests "the same" for a key: method, path, canonical query (parameters
/// sorted), canonical body (a JSON body re-serialised with members sorted at every depth, so
/// member order and whitespace do not matter; other bodies byte for byte), the caller's subject
/// and its scopes (a replay never shows more than the retrying token may see), and the declared
/// `X-Usage-Purpose` (it decides whether an answer shows content). "sha256:<hex>".
std::string request_fingerprint(const api_request& request, std::string_view subject,
                                const std::vector<std::string>& scopes);

/// A stored answer: what the client got, as it went on the wire (errors rendered).
struct stored_answer {
  int status = 200;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;  ///< Location, ETag, Cache-Control
  std::string body;
};

/// One ledger record.
struct ledger_record {
  std::string fingerprint;
  std::int64_t created_ms = 0;  ///< Unix milliseconds of the commit that stored it
  stored_answer answer;
};

/// The answer as the client will see it (an error reply rendered in the error shape).
stored_answer stored_from(const api_reply& reply);

/// The reply that replays `answer`, marked with `replay_header`.
api_reply replay_of(const stored_answer& answer);

std::string ledger_record_json(const ledger_record& r);

/// What the record stored under a key (`stored`, as read; none: no record) says about a request
/// with `fingerprint` at `now_ms`: replay its answer, refuse as a mismatch, or execute (no record,
/// an unreadable one, or one past `retention_ms`, whose `created_ms` is then given).
struct ledger_lookup {
  enum kind_t { fresh, replay, mismatch } kind = fresh;
  stored_answer answer;                    ///< replay: what to answer
  std::optional<std::int64_t> expired_ms;  ///< fresh over an expired record: its created_ms
};
ledger_lookup look_up(const std::optional<std::string>& stored, std::string_view fingerprint, std::int64_t retention_ms,
                      std::int64_t now_ms);

/// 422 IDEMPOTENCY_KEY_MISMATCH.
api_reply key_mismatch_reply();
std::optional<ledger_record> parse_ledger_record(std::string_view json_text);

}  // namespace cl::domain
