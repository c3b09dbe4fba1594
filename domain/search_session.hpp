#pragma once
/// Search sessions (spec 4.5.3, issue 14), pure: who owns a session, when it expires, which hits
/// it has already answered, and the bounds on how many sessions are kept. The search session actor
/// holds a `session_store`; this one keeps them in memory (one node). A shared store for several
/// API nodes would implement the same interface.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cl::domain {

/// Whose session it is: another principal's `search_id` reads as unknown.
struct session_owner {
  std::string tenant, sub, client_id;
  bool operator==(const session_owner& o) const {
    return tenant == o.tenant && sub == o.sub && client_id == o.client_id;
  }
};

/// What a session searches for (fixed at its first page).
struct search_request {
  std::string query;
  std::vector<std::string> types, languages;
  std::string work_id;
  bool usable_only = false;
};

/// A session: its request and the hits already answered (never answered again).
struct search_session {
  std::string id;  ///< srch_
  session_owner owner;
  search_request request;
  std::unordered_set<std::string> returned;
  std::int64_t last_used_ms = 0;
};

/// The limits of sessions (config `search.*`).
struct session_limits {
  std::int64_t ttl_ms = 600 * 1000;      ///< idle time after which a session is gone
  std::size_t max_sessions = 10000;      ///< in all; past it the least recently used goes
  std::size_t max_per_principal = 100;   ///< per owner; past it that owner's least recently used goes
  std::size_t max_returned = 10000;      ///< hits one session may answer (then it is exhausted)
  /// Answered hits held over all sessions (the memory bound: ~100 bytes each); past it the least
  /// recently used other sessions go.
  std::size_t max_held_hits = 1000000;
};

/// Why a lookup found no session: never there (or another's), or there and idle past its TTL.
enum class session_miss { unknown, expired };

class session_store {
public:
  virtual ~session_store() = default;
  /// Opens a session for `owner`; answers its id. May evict (limits).
  virtual std::string open(const session_owner& owner, search_request request, std::int64_t now_ms) = 0;
  /// The session `id` of `owner`, touched (its idle time restarts); or why not.
  virtual std::pair<search_session*, std::optional<session_miss>> find(const std::string& id, const session_owner& owner,
                                                                       std::int64_t now_ms) = 0;
  /// Records hits as answered by session `id` (found just before); answers those it had not
  /// answered before, in order. May evict other sessions (limits).
  virtual std::vector<std::string> answered(const std::string& id, const std::vector<std::string>& hit_ids) = 0;
  virtual std::size_t size() const = 0;
};

/// Sessions in this process's memory, bounded by `limits`. Expired ones are told apart from unknown
/// ones for a while (one more TTL) so a client hears `SEARCH_SESSION_EXPIRED`, then forgotten.
class memory_session_store final : public session_store {
public:
  explicit memory_session_store(session_limits limits);
  std::string open(const session_owner& owner, search_request request, std::int64_t now_ms) override;
  std::pair<search_session*, std::optional<session_miss>> find(const std::string& id, const session_owner& owner,
                                                               std::int64_t now_ms) override;
  std::vector<std::string> answered(const std::string& id, const std::vector<std::string>& hit_ids) override;
  std::size_t size() const override { return sessions_.size(); }
  /// Answered hits held over all sessions.
  std::size_t held_hits() const { return held_hits_; }

private:
  using lru_list = std::list<std::string>;  ///< ids, least recently used first
  struct entry {
    search_session session;
    lru_list::iterator lru;
  };
  void drop(const std::string& id, bool expired);
  void sweep(std::int64_t now_ms);
  static std::string owner_key(const session_owner& o);

  session_limits limits_;
  std::unordered_map<std::string, entry> sessions_;
  lru_list lru_;
  std::unordered_map<std::string, std::size_t> per_owner_;
  std::size_t held_hits_ = 0;
  struct gone {
    std::string owner;       ///< owner_key
    std::int64_t forget_at;  ///< after this, the id reads as unknown
  };
  std::unordered_map<std::string, gone> expired_;
};

}  // namespace cl::domain
