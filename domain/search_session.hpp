#pragma once
/// Search sessions (spec 4.5.3, issue 14), pure: who owns a session, when it expires, which hits
/// it has already answered, and the bounds on how many sessions are kept. The search session actors
/// share a `session_store`: this one keeps them in memory (one node); on PostgreSQL every node shares
/// one in the database (storage/postgresql/search_sessions.hpp), so a session continues on any node.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
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

/// A session: its request and the hits already answered (never answered again). `position`: the
/// change-log position the index of the node that opened it had applied; a page on another node is
/// answered from an index at least that far (none of the first page's hits is missing there).
struct search_session {
  std::string id;  ///< srch_
  session_owner owner;
  search_request request;
  std::unordered_set<std::string> returned;
  std::int64_t last_used_ms = 0;
  std::uint64_t position = 0;
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

/// A session found (a copy), or why none was.
struct found_session {
  std::optional<search_session> session;
  session_miss miss = session_miss::unknown;  ///< when `session` is empty
};

/// Where sessions live. Safe to call from several threads at once (the search session actors share
/// one); on a shared store, from several nodes at once.
class session_store {
public:
  virtual ~session_store() = default;
  /// Opens the session `id` (new) for `owner` on an index at `position`, with `hit_ids` answered
  /// by its first page at once (one write where the store is shared); answers them, each once, in
  /// order. May evict (limits).
  virtual std::vector<std::string> opened(const std::string& id, const session_owner& owner, search_request request,
                                          std::uint64_t position, const std::vector<std::string>& hit_ids,
                                          std::int64_t now_ms) = 0;
  /// The session `id` of `owner`, touched (its idle time restarts); or why not.
  virtual found_session find(const std::string& id, const session_owner& owner, std::int64_t now_ms) = 0;
  /// Records hits as answered by `owner`'s session `id`; answers those it had not answered before,
  /// in order (a concurrent page, here or on another node, may have taken the others). A session
  /// gone meanwhile (evicted, expired) has nothing left to repeat: every hit is answered. May evict
  /// other sessions (limits).
  virtual std::vector<std::string> answered(const std::string& id, const session_owner& owner,
                                            const std::vector<std::string>& hit_ids, std::int64_t now_ms) = 0;
  /// Sessions held (a metric; a shared store may answer its count as of its last sweep).
  virtual std::size_t size() const = 0;
  /// How often `sweep` is to run, apart from the calls above: 0 (the default) where the store applies
  /// its bounds in those calls (in memory). A shared store answers a few seconds, and one sweeper
  /// actor per node runs it (actors/search/search_session.hpp), off the pages' path.
  virtual std::int64_t sweep_every_ms() const { return 0; }
  /// Forgets sessions idle two TTLs and applies the bounds (in all, per owner, on held hits), least
  /// recently used first. Nothing to do where `sweep_every_ms()` is 0. Answers whether the sweep
  /// also gave the space of the sessions removed back for reuse (PostgreSQL: it vacuumed the table).
  virtual bool sweep(std::int64_t /*now_ms*/) { return false; }
};

/// Sessions in this process's memory, bounded by `limits`. Expired ones are told apart from unknown
/// ones for a while (one more TTL) so a client hears `SEARCH_SESSION_EXPIRED`, then forgotten.
class memory_session_store final : public session_store {
public:
  explicit memory_session_store(session_limits limits);
  std::vector<std::string> opened(const std::string& id, const session_owner& owner, search_request request,
                                  std::uint64_t position, const std::vector<std::string>& hit_ids,
                                  std::int64_t now_ms) override;
  found_session find(const std::string& id, const session_owner& owner, std::int64_t now_ms) override;
  std::vector<std::string> answered(const std::string& id, const session_owner& owner,
                                    const std::vector<std::string>& hit_ids, std::int64_t now_ms) override;
  std::size_t size() const override;
  /// Answered hits held over all sessions.
  std::size_t held_hits() const;

private:
  using lru_list = std::list<std::string>;  ///< ids, least recently used first
  struct entry {
    search_session session;
    lru_list::iterator lru;
  };
  void drop(const std::string& id, bool expired);
  std::vector<std::string> record(entry& e, const std::vector<std::string>& hit_ids);
  void forget_expired(std::int64_t now_ms);
  static std::string owner_key(const session_owner& o);

  mutable std::mutex mutex_;
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
