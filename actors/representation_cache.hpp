#pragma once
/// Renderings of Resources (the JSON read with its rights and hash, the Markdown read), shared by
/// the coordinators that make and read them in place, so a hot read copies bytes instead of hashing
/// and composing them.
///
/// Keyed by (tenant, Resource, rendering). An entry keeps the record and the rights it was made
/// from, and is found only when the request's record and rights are byte for byte the same: a
/// rendering is never stale, whichever node or backend wrote since, and nothing has to invalidate
/// it (a changed record or resolution just misses, and its new rendering replaces the old one).
/// Bounded in bytes (keys, records, rights, renderings), least recently read out first.

#include "domain/sharded_lru.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cl::actors {

class representation_cache {
public:
  struct rendering {
    std::string hash;  ///< the ETag's hash (empty for renderings without one)
    std::string body;
    /// The answer's headers that follow from what it was made from (the rights' travel headers,
    /// caching, the edge keys), in order, without `Surrogate-Control`: that one counts down with
    /// the clock and the caller's token, and goes at `surrogate_control_at`.
    std::vector<std::pair<std::string, std::string>> headers;
    std::size_t surrogate_control_at = 0;
  };
  /// What a rendering was made from: compared on every hit.
  struct inputs {
    std::string_view record;
    std::string_view rights_digest;  ///< `resolved_rights::digest_input`
    std::string_view rights_json;
  };

  /// `budget`: bytes held at most (0: nothing is kept).
  explicit representation_cache(std::size_t budget);

  static std::string key(std::string_view tenant, std::string_view id, std::string_view rendering);

  /// The rendering kept under `key` if it was made from exactly `from`.
  std::shared_ptr<const rendering> find(const std::string& key, const inputs& from) const;
  /// Keeps `made` under `key`, made from `from` (replacing what the key held).
  void insert(const std::string& key, const inputs& from, std::shared_ptr<const rendering> made);

  std::size_t bytes() const;
  std::size_t size() const;

private:
  struct slot {
    std::string record, rights_digest, rights_json;
    std::shared_ptr<const rendering> made;
  };
  struct cost {
    std::size_t operator()(std::string_view key, const slot& s) const;
  };

  domain::sharded_lru<slot, cost> slots_;
};

}  // namespace cl::actors
