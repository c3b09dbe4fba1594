// Reads on replicas, with read-your-writes (storage/postgresql/replicas.hpp says what).

#include "storage/postgresql/replicas.hpp"

namespace cl::storage::pg {

namespace {

const statement replayed_head{"SELECT seq, timeline FROM change_head"};

}  // namespace

held_reads::held_reads(pool& primary, std::function<std::optional<read_floor>()> required)
  : pool_(primary), plain_(primary), required_(std::move(required)) {}

rows held_reads::run_on(const connection& c, const read_floor& floor, const statement& s,
                        std::initializer_list<std::string_view> params) const {
  if (c.replayed_through(floor.position, floor.timeline)) return c.run(s, params);
  rows head;
  auto r = c.run_after(replayed_head, head, s, params);
  auto at = head.empty() ? 0 : static_cast<std::uint64_t>(head.integer(0, 0));
  auto timeline = head.empty() ? 0 : static_cast<std::uint64_t>(head.integer(0, 1));
  // The primary is at the floor (every position the node knows was committed there), on the
  // timeline the node learned or a later one (its first commit since a promotion the node has
  // not heard of yet).
  if (at >= floor.position && timeline >= floor.timeline) {
    c.replayed(at, timeline);
    return r;
  }
  c.give_up();
  pool_.drop_idle();
  refused_.fetch_add(1, std::memory_order_relaxed);
  throw unavailable{"the server reached as the primary is behind what this node has seen committed: "
                    "it is no longer the primary"};
}

rows held_reads::run(const statement& s, std::initializer_list<std::string_view> params) const {
  auto floor = required_();
  if (!floor) return plain_.run(s, params);
  {
    auto c = pool_.acquire();  // no connection free, or none can be made: unavailable, at once
    try {
      return run_on(*c, *floor, s, params);
    } catch (const no_answer&) {
      throw;  // the server is there but silent: another connection would wait as long again
    } catch (const unavailable&) {
      // The connection broke (a server that restarted since), or its server is behind the floor.
    }
  }
  pool_.drop_idle();
  auto c = pool_.acquire();  // a read: safe to send again, on a new connection
  return run_on(*c, *floor, s, params);
}

replica_session::replica_session(const std::string& url, const std::string& password, std::size_t size,
                                 std::chrono::milliseconds answer_wait, const session& primary,
                                 std::function<std::optional<read_floor>()> required)
  // A replica connection not free within 20 ms: the read goes to the primary rather than wait.
  : replicas_(url, password, size, std::chrono::milliseconds{20}, 1000, answer_wait),
    primary_(primary),
    required_(std::move(required)) {}

rows replica_session::run(const statement& s, std::initializer_list<std::string_view> params) const {
  auto floor = required_();
  if (floor && steady_ms() >= resting_until_ms_.load(std::memory_order_relaxed)) {
    try {
      auto c = replicas_.acquire();
      if (c->replayed_through(floor->position, floor->timeline)) {
        auto r = c->run(s, params);
        on_replica_.fetch_add(1, std::memory_order_relaxed);
        return r;
      }
      rows head;
      auto r = c->run_after(replayed_head, head, s, params);
      auto at = head.empty() ? 0 : static_cast<std::uint64_t>(head.integer(0, 0));
      auto timeline = head.empty() ? 0 : static_cast<std::uint64_t>(head.integer(0, 1));
      c->replayed(at, timeline);
      if (timeline != floor->timeline) {
        elsewhere_.fetch_add(1, std::memory_order_relaxed);
      } else if (at >= floor->position) {
        behind_.store(0, std::memory_order_relaxed);
        on_replica_.fetch_add(1, std::memory_order_relaxed);
        return r;
      } else {
        behind_.store(floor->position - at, std::memory_order_relaxed);
      }
    } catch (const unavailable&) {
      resting_until_ms_.store(steady_ms() + rest.count(), std::memory_order_relaxed);
    } catch (const conflict&) {
      // Cancelled by the replica's replay (SQLSTATE 40001): the primary has no such conflict.
    }
  }
  on_primary_.fetch_add(1, std::memory_order_relaxed);
  return primary_.run(s, params);
}

replica_counts replica_session::counts() const {
  return {on_replica_.load(std::memory_order_relaxed), on_primary_.load(std::memory_order_relaxed),
          behind_.load(std::memory_order_relaxed), elsewhere_.load(std::memory_order_relaxed)};
}

}  // namespace cl::storage::pg
