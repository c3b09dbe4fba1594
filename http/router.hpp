#pragma once
/// A route of the public API and the matcher over the route groups' routes (app/groups.hpp). No Beast here: routing is pure
/// string work, unit-tested, and the OpenAPI test compares this table with the document.

#include "actors/coordinator.hpp"
#include "domain/exchange.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::http {

class resource_metadata;

/// What a route answered on the I/O thread may read besides its request: built once by the
/// composition root from the settings (no process-global state).
struct local_context {
  const resource_metadata* metadata = nullptr;  ///< the protected resource metadata (RFC 9728)
};

/// One public operation.
struct route {
  std::string_view method;         ///< GET, POST, ...
  std::string_view path_template;  ///< OpenAPI form, e.g. /v0/content-lake/resources/{id}
  std::string_view scope;          ///< required token scope; empty with `local` means no token
  actors::plan_fn plan = nullptr;  ///< answered by a coordinator, or
  /// answered on the I/O thread
  domain::api_reply (*local)(const domain::api_request&, const local_context&) = nullptr;
  /// The request's deadline when the operation takes longer than most (a blob completion reads
  /// the whole object); zero: the service's `actors.ask_timeout_ms`.
  std::chrono::milliseconds deadline{0};
  /// The operation reads `Accept` itself (a Resource read chooses its rendering; a blob read
  /// redirects to the bytes, whatever their type): no 406 from the router. Every other operation
  /// answers JSON and is 406 NOT_ACCEPTABLE when `Accept` excludes it.
  bool reads_accept = false;
  /// The plan's only effect is the write it hands the writer (`write_then`), whose ledger record
  /// goes in the same transaction: with an Idempotency-Key the ledger may let it run before knowing
  /// the key is new (actors/ledger.hpp). False for a plan with any other effect (an object store
  /// call, a delivery, a session): its key is looked up before anything runs.
  bool only_effect_is_write = false;
  /// The plan, a read with no effect until it answers, runs first on the I/O thread that read the
  /// request: answered there when the shared caches hold what it reads (no coordinator, no hop
  /// between threads); at its first ask of an actor it stops and a coordinator runs it
  /// (`actors::coordinate`).
  bool in_place = false;
};

/// `r` with `only_effect_is_write` set.
inline route write_only(route r) {
  r.only_effect_is_write = true;
  return r;
}

/// `r` with `in_place` set.
inline route run_in_place(route r) {
  r.in_place = true;
  return r;
}

/// Result of matching a method and path.
struct route_match {
  const route* found = nullptr;                              ///< set when method and path match
  std::vector<std::pair<std::string, std::string>> params;  ///< decoded path parameters
  std::string allow;  ///< when the path matches but the method does not: e.g. "GET, POST"
};

/// The routes' templates split into segments once and grouped by their number of segments, so a
/// request compares its path with the templates of its own length only (about a tenth of them).
/// Points into `routes`, which must outlive it unchanged.
class route_table {
public:
  explicit route_table(const std::vector<route>& routes);
  /// The first route (in `routes`' order) whose template and method match; the methods of the
  /// others whose template matches in `allow` when none does.
  route_match match(std::string_view method, std::string_view path) const;

private:
  struct entry {
    const route* r;
    std::vector<std::string_view> segments;  ///< "{name}" for a parameter
  };
  std::vector<std::vector<entry>> by_length_;  ///< by the number of segments
};

/// Matches `method` and `path` against `routes` (a route_table made for the one call).
route_match match_route(const std::vector<route>& routes, std::string_view method, std::string_view path);

/// Decodes %XX escapes; returns false on a malformed escape or a decoded '/'. What the value may
/// hold (no U+0000, UTF-8) is the request's check (domain/text.hpp), answered 400 naming it.
bool percent_decode_segment(std::string_view in, std::string& out);

}  // namespace cl::http
