#include "domain/search_session.hpp"

#include "domain/ids.hpp"

namespace cl::domain {

memory_session_store::memory_session_store(session_limits limits) : limits_(limits) {}

std::string memory_session_store::owner_key(const session_owner& o) {
  return o.tenant + '\0' + o.sub + '\0' + o.client_id;
}

void memory_session_store::drop(const std::string& id, bool expired) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto key = owner_key(it->second.session.owner);
  if (expired) expired_[id] = {key, it->second.session.last_used_ms + 2 * limits_.ttl_ms};
  if (--per_owner_[key] == 0) per_owner_.erase(key);
  held_hits_ -= it->second.session.returned.size();
  lru_.erase(it->second.lru);
  sessions_.erase(it);
}

void memory_session_store::forget_expired(std::int64_t now_ms) {
  // Least recently used first: the expired ones are at the front.
  while (!lru_.empty()) {
    const auto& oldest = sessions_.at(lru_.front()).session;
    if (oldest.last_used_ms + limits_.ttl_ms > now_ms) break;
    drop(oldest.id, true);
  }
  // Expired ids are remembered one more TTL, then forgotten (bounded like the sessions).
  if (expired_.size() > limits_.max_sessions)
    for (auto i = expired_.begin(); i != expired_.end();)
      i = i->second.forget_at <= now_ms ? expired_.erase(i) : std::next(i);
}

std::size_t memory_session_store::size() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return sessions_.size();
}

std::size_t memory_session_store::held_hits() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return held_hits_;
}

std::vector<std::string> memory_session_store::opened(const std::string& id, const session_owner& owner,
                                                      search_request request, std::uint64_t position,
                                                      const std::vector<std::string>& hit_ids, std::int64_t now_ms) {
  std::lock_guard<std::mutex> guard{mutex_};
  forget_expired(now_ms);
  auto key = owner_key(owner);
  if (limits_.max_per_principal > 0 && per_owner_[key] >= limits_.max_per_principal) {
    for (const auto& other : lru_)  // this owner's least recently used
      if (owner_key(sessions_.at(other).session.owner) == key) {
        drop(other, false);
        break;
      }
  }
  if (limits_.max_sessions > 0 && sessions_.size() >= limits_.max_sessions) drop(lru_.front(), false);
  search_session s;
  s.id = id;
  s.owner = owner;
  s.request = std::move(request);
  s.last_used_ms = now_ms;
  s.position = position;
  lru_.push_back(id);
  auto& e = sessions_.emplace(id, entry{std::move(s), std::prev(lru_.end())}).first->second;
  ++per_owner_[key];
  return record(e, hit_ids);
}

found_session memory_session_store::find(const std::string& id, const session_owner& owner, std::int64_t now_ms) {
  std::lock_guard<std::mutex> guard{mutex_};
  forget_expired(now_ms);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || !(it->second.session.owner == owner)) {
    // Only its owner learns that a session expired; for anyone else it never existed.
    auto gone = expired_.find(id);
    if (it == sessions_.end() && gone != expired_.end() && gone->second.owner == owner_key(owner)
        && gone->second.forget_at > now_ms)
      return {std::nullopt, session_miss::expired};
    return {std::nullopt, session_miss::unknown};
  }
  auto& e = it->second;
  e.session.last_used_ms = now_ms;
  lru_.splice(lru_.end(), lru_, e.lru);
  return {e.session, session_miss::unknown};
}

std::vector<std::string> memory_session_store::answered(const std::string& id, const session_owner& owner,
                                                       const std::vector<std::string>& hit_ids, std::int64_t now_ms) {
  std::lock_guard<std::mutex> guard{mutex_};
  forget_expired(now_ms);
  auto it = sessions_.find(id);
  // Gone meanwhile (or never its owner's): nothing left to repeat them.
  if (it == sessions_.end() || !(it->second.session.owner == owner)) return hit_ids;
  it->second.session.last_used_ms = now_ms;
  lru_.splice(lru_.end(), lru_, it->second.lru);
  return record(it->second, hit_ids);
}

std::vector<std::string> memory_session_store::record(entry& e, const std::vector<std::string>& hit_ids) {
  std::vector<std::string> fresh;
  for (const auto& h : hit_ids)
    if (e.session.returned.insert(h).second) fresh.push_back(h);
  held_hits_ += fresh.size();
  // The memory bound: other sessions go, least recently used first (never the one answering).
  while (limits_.max_held_hits > 0 && held_hits_ > limits_.max_held_hits && lru_.front() != e.session.id)
    drop(lru_.front(), false);
  return fresh;
}

}  // namespace cl::domain
